package io.sluice;

import com.google.common.util.concurrent.Uninterruptibles;
import io.netty.util.ResourceLeakDetector;
import io.sluice.config.ConfigException;
import io.sluice.config.ConfigFile;
import io.sluice.config.Setting;
import io.sluice.config.SettingTable;
import io.sluice.config.Settings;
import io.sluice.cookie.Cookies;
import io.sluice.ecs.ClientSubnets;
import io.sluice.limit.Limits;
import io.sluice.ctl.CtlCommand;
import io.sluice.posix.Signals;
import io.sluice.posix.SystemdNotify;
import io.sluice.stress.AnswerCommand;
import io.sluice.stress.StressCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.BindException;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * The command line: reads settings (file, then flags), starts {@link Sluice}, waits for SIGTERM or
 * SIGINT, drains and exits.
 *
 * <p>Exit codes: 0 after a clean stop, {@code --help} or {@code --version}; 1 when it could not
 * start (a listen address taken); 2 for a bad flag, value or configuration file.
 */
@Command(name = "sluice", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        sortOptions = false, usageHelpAutoWidth = true,
        description = "A DNS forwarder that limits queries per registrable domain.",
        footer = "%nSubcommands: ctl (the admin API from a terminal; 'ctl --help'),"
                + " stress (a DNS load generator; 'stress --help', or scripts/dnsstress),"
                + " answer (a server answering every query, the upstream of scripts/bench without nsd).")
public final class Main implements Callable<Integer> {
    static final int EXIT_OK = 0;
    static final int EXIT_START_FAILED = 1;
    static final int EXIT_USAGE = 2;

    private static final Logger log = LoggerFactory.getLogger(Main.class);

    @Option(names = "--config", paramLabel = "FILE",
            description = "YAML file with the same settings; flags override it.")
    Path config;

    @Option(names = "--check-config", description = "Check the file and flags as a start would, say so, and exit:"
            + " 0 when sluice would start with them, 2 naming the first error (as dnsdist's --check-config).")
    boolean checkConfig;

    /** The command as parsed: the flags of {@link SettingTable} are added to it in {@link #run}. */
    @Spec
    CommandSpec spec;

    private final CountDownLatch stop = new CountDownLatch(1);

    public static void main(String[] args) {
        // Netty's default leak detection records a stack trace for about one buffer in a hundred:
        // a walk of the stack on the query path, paid by every loop. Off, unless the operator sets it.
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
        System.exit(run(args));
    }

    /** Runs the command line and returns the exit code instead of exiting. */
    static int run(String... args) {
        return run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    }

    /** {@link #run(String...)} writing to {@code out} and {@code err}. */
    static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new Main());
        addFlags(cli.getCommandSpec());
        cli.addSubcommand("stress", new StressCommand());
        cli.addSubcommand("answer", new AnswerCommand());
        cli.addSubcommand("ctl", new CtlCommand());
        cli.setOut(out); // after the subcommands: picocli gives them the writers set by then
        cli.setErr(err);
        cli.setParameterExceptionHandler((e, a) -> {
            PrintWriter w = e.getCommandLine().getErr();
            String who = e.getCommandLine().getCommandName().equals("stress") ? "dnsstress"
                    : underCtl(e.getCommandLine()) ? "sluice ctl" : "sluice";
            w.println(who + ": " + e.getMessage() + " (see --help)");
            w.flush();
            return EXIT_USAGE;
        });
        return cli.execute(args);
    }

    private static boolean underCtl(CommandLine c) {
        for (CommandLine at = c; at != null; at = at.getParent()) {
            if (at.getCommandName().equals("ctl")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public Integer call() {
        Settings settings;
        try {
            settings = settings();
            if (checkConfig) {
                Limits.checkAtStart(settings.limits());
                Cookies.checkAtStart(settings);
                ClientSubnets.checkAtStart(settings);
            }
        } catch (ConfigException e) {
            spec.commandLine().getErr().println("sluice: " + e.getMessage());
            return EXIT_USAGE;
        }
        if (checkConfig) {
            spec.commandLine().getOut().println("sluice: configuration OK" + (config == null ? " (flags only)" : ": " + config));
            return EXIT_OK;
        }
        Sluice sluice;
        try {
            sluice = Sluice.start(settings);
        } catch (ConfigException e) {
            System.err.println("sluice: " + e.getMessage());
            return EXIT_USAGE;
        } catch (BindException e) {
            System.err.println("sluice: cannot listen on " + e.getMessage());
            return EXIT_START_FAILED;
        } catch (InterruptedException e) {
            return EXIT_START_FAILED;
        } catch (RuntimeException e) {
            // e.g. an upstream whose address family this host cannot reach: one line, not a trace
            System.err.println("sluice: cannot start: " + e.getMessage());
            return EXIT_START_FAILED;
        }
        Signals.on("TERM", s -> stop.countDown());
        Signals.on("INT", s -> stop.countDown());
        if (config != null) {
            sluice.reloadFrom(this::settings);
        }
        // SIGHUP reloads, as for Unbound, nsd and BIND. SIGUSR1 is sent out of habit (reopen logs);
        // the JVM's default would be to exit, dropping every query in flight: it is logged instead.
        try {
            if (!Signals.on("HUP", s -> reload(sluice))) {
                log.warn("SIGHUP is ignored (started under nohup?) and does not reload: reload with `sluice ctl reload`"
                        + " or POST /api/v1/reload");
            }
            Signals.on("USR1", s -> log.warn("SIGUSR1 ignored: sluice logs to standard error, there is no file to reopen;"
                    + " send SIGHUP to reload"));
        } catch (IllegalArgumentException e) {
            log.warn("cannot handle SIGHUP and SIGUSR1 ({}): they act as the JVM decides", e.getMessage()); // -Xrs
        }
        log.info("sluice {} {}", Version.get(), sluice.describe());
        String exposure = sluice.exposureWarning();
        if (exposure != null) {
            log.warn(exposure);
        }
        notifyServiceManager("READY=1"); // every listener is bound and reading
        Uninterruptibles.awaitUninterruptibly(stop);
        notifyServiceManager("STOPPING=1");
        log.info("stopping: draining queries in flight");
        sluice.close();
        log.info("stopped; {}", sluice.metrics());
        return EXIT_OK;
    }

    /** Tells systemd of a {@code Type=notify} unit how sluice stands; a failure is logged, not fatal. */
    private static void notifyServiceManager(String state) {
        try {
            SystemdNotify.send(state);
        } catch (IOException e) {
            log.warn("cannot tell the service manager {} at NOTIFY_SOCKET: {}", state, e.getMessage());
        }
    }

    /** A reload asked by SIGHUP: logged, and on an error the running settings stay. */
    private static void reload(Sluice sluice) {
        try {
            List<String> changes = sluice.reload();
            log.info("SIGHUP: reloaded; {}", changes.isEmpty() ? "nothing changed" : String.join("; ", changes));
        } catch (ConfigException e) {
            log.warn("SIGHUP: reload failed, the running settings stay: {}", e.getMessage());
        }
    }

    private Settings settings() throws ConfigException {
        Settings.Builder b = new Settings.Builder().configFile(config);
        if (config != null) {
            ConfigFile.apply(config, b);
        }
        ParseResult parsed = spec.commandLine().getParseResult();
        for (Setting<?> setting : SettingTable.ALL) {
            if (setting.flag() == null || !parsed.hasMatchedOption(setting.flag())) {
                continue;
            }
            Object value = parsed.matchedOptionValue(setting.flag(), null);
            @SuppressWarnings("unchecked")
            List<String> values = setting.isSwitch() ? List.of("true")
                    : value instanceof List<?> ? (List<String>) value : List.of((String) value);
            try {
                b.set(setting.key(), values, setting.flag());
            } catch (ConfigException e) {
                throw new ConfigException(setting.flag() + ": " + e.getMessage());
            }
        }
        return b.build();
    }

    /** One flag per setting that has one, with its help line and default, in the table's order. */
    private static void addFlags(CommandSpec spec) {
        for (Setting<?> s : SettingTable.ALL) {
            if (s.flag() == null) {
                continue;
            }
            OptionSpec.Builder o = OptionSpec.builder(s.flag())
                    .description(s.help() + (s.defaultText() == null ? "" : " Default: " + s.defaultText() + "."));
            if (s.isSwitch()) {
                o.arity("0").type(boolean.class);
            } else if (s.repeatable()) {
                o.paramLabel(s.label()).type(List.class).auxiliaryTypes(String.class);
            } else {
                o.paramLabel(s.label()).type(String.class);
            }
            spec.addOption(o.build());
        }
    }

    /** The version from the build, for {@code --version} and the startup line. */
    static final class Version implements CommandLine.IVersionProvider {
        static String get() {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("/sluice-version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                // fall through to "unknown"
            }
            return p.getProperty("version", "unknown");
        }

        @Override
        public String[] getVersion() {
            return new String[] {"sluice " + get()};
        }
    }
}
