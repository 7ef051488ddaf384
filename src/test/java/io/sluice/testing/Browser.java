package io.sluice.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * A real headless browser for tests: Debian's chromium driven by its chromedriver through
 * Selenium. Without them the test is skipped (apt-get install chromium chromium-driver), or fails
 * when {@code SLUICE_REQUIRE_BROWSER} is set, as {@code .ci/run} sets it.
 */
public final class Browser {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path DRIVER = Path.of("/usr/bin/chromedriver");

    private Browser() {
    }

    /** A headless chromium, 1280 by 900; the caller quits it. */
    public static ChromeDriver start() {
        Prerequisite.assume("browser tests", Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER),
                "chromium or chromedriver is not installed (apt-get install chromium chromium-driver)",
                "SLUICE_REQUIRE_BROWSER");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        // --no-sandbox: the sandbox needs namespaces a container running as root does not give
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
                .withTimeout(Duration.ofSeconds(30)).build();
        return new ChromeDriver(service, options);
    }
}
