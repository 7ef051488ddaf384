package io.sluice.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.limit.ManualClock;
import io.sluice.testing.Browser;
import io.sluice.testing.Dns;
import io.sluice.testing.RunningSluice;
import io.sluice.testing.TestUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Type;

/**
 * The dashboard in a real headless chromium: it shows the DNS traffic sent, and a limit set from
 * its form changes what a DNS client gets. Set {@code -Dsluice.screenshot=docs/dashboard.png} to
 * keep a picture of the page.
 */
class DashboardBrowserTest {
    private static final Duration WAIT = Duration.ofSeconds(15);

    @Test
    void showsTrafficAndSetsAndRemovesALimit() throws Exception {
        ChromeDriver browser = Browser.start();
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> b.domain("example.org", "5", "1h"),
                     "admin.listen", "127.0.0.1:0")) {
            for (int i = 0; i < 40; i++) {
                Dns.udp(s.address(), Dns.query(i, "host" + i + ".shop.example.com.", Type.A));
            }
            for (int i = 0; i < 12; i++) {
                Dns.udp(s.address(), Dns.query(i, "w" + i + ".example.org.", Type.A)); // 5 pass, 7 refused
            }
            browser.get("http://127.0.0.1:" + s.sluice().adminAddress().getPort() + "/");
            WebDriverWait wait = new WebDriverWait(browser, WAIT);
            wait.ignoring(StaleElementReferenceException.class); // the page redraws its tables as it polls
            // the busiest domains are drained from the loops four times a second: wait for all of them
            wait.until(d -> text(d, "#top tbody").contains("example.com 40 0 unlimited no"));
            wait.until(d -> text(d, "#top tbody").contains("example.org 12 7 5 per 1h yes"));
            wait.until(d -> text(d, "#upstreams tbody").contains(up.hostPort() + " up"));
            wait.until(d -> !text(d, "#qps").equals("-"));
            assertEquals("none", text(browser, "#hit"), "no cache in this fixture: nothing looked up");
            assertTrue(text(browser, "#limits tbody").contains("example.org 5 per 1h file"), text(browser, "#limits tbody"));

            browser.findElement(By.id("domain")).sendKeys("example.com");
            browser.findElement(By.id("queries")).sendKeys("1");
            browser.findElement(By.id("window")).sendKeys("1h");
            browser.findElement(By.id("reason")).sendKeys("set from the dashboard");
            browser.findElement(By.id("apply")).click();
            wait.until(d -> text(d, "#limits tbody").contains("example.com 1 per 1h api"));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(1, "a.example.com.", Type.A))));
            assertEquals(Rcode.REFUSED, Dns.rcode(Dns.udp(s.address(), Dns.query(2, "b.example.com.", Type.A))),
                    "the limit set from the page");
            String picture = System.getProperty("sluice.screenshot");
            if (picture != null) {
                wait.until(d -> text(d, "#top tbody").contains("example.com 42 1"));
                Files.write(Path.of(picture), browser.getScreenshotAs(OutputType.BYTES));
            }

            wait.until(d -> { // found and clicked in one go: a redraw in between makes the button found stale
                d.findElement(By.cssSelector("#limits button.rm[data-domain='example.com']")).click();
                return true;
            });
            wait.until(d -> !text(d, "#limits tbody").contains("example.com 1 per 1h"));
            assertEquals(Rcode.NOERROR, Dns.rcode(Dns.udp(s.address(), Dns.query(3, "c.example.com.", Type.A))),
                    "removed from the page");
            assertEquals("", text(browser, "#message"), "no error shown");
        } finally {
            browser.quit();
        }
    }

    /** With a token, the browser is asked for it first, then gets the dashboard, which sends it on. */
    @Test
    void withATokenThePageAsksForItAndThenWorks() throws Exception {
        Path token = Files.createTempFile("sluice-admin", ".token");
        Files.writeString(token, "page-token\n");
        ChromeDriver browser = Browser.start();
        try (TestUpstream up = new TestUpstream();
             RunningSluice s = RunningSluice.start(List.of(up), new ManualClock(), b -> { },
                     "admin.listen", "127.0.0.1:0", "admin.token-file", token.toString())) {
            Dns.udp(s.address(), Dns.query(1, "a.tokened.example.", Type.A));
            browser.get("http://127.0.0.1:" + s.sluice().adminAddress().getPort() + "/");
            WebDriverWait wait = new WebDriverWait(browser, WAIT);
            wait.ignoring(StaleElementReferenceException.class);
            browser.findElement(By.id("token")).sendKeys("wrong");
            browser.findElement(By.id("enter")).click();
            wait.until(d -> text(d, "#message").contains("refused"));
            browser.findElement(By.id("token")).clear();
            browser.findElement(By.id("token")).sendKeys("page-token");
            browser.findElement(By.id("enter")).click();
            wait.until(d -> !d.findElements(By.cssSelector("#top tbody")).isEmpty()
                    && text(d, "#top tbody").contains("tokened.example 1 0 unlimited no"));
        } finally {
            browser.quit();
            Files.deleteIfExists(token);
        }
    }

    private static String text(WebDriver d, String css) {
        return d.findElement(By.cssSelector(css)).getText().replaceAll("\\s+", " ").strip();
    }
}
