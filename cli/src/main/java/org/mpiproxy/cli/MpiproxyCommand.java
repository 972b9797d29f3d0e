package org.mpiproxy.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/** {@code mpiproxy}: the command-line launcher's entry point. */
@Command(name = "mpiproxy", mixinStandardHelpOptions = true, version = "mpiproxy 0.1.0",
        description = "Runs MPI-style jobs on nodes served by MPI proxies, from hostfiles or a Slurm allocation.",
        subcommands = CommandLine.HelpCommand.class)
public final class MpiproxyCommand implements Runnable {

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "give a command: run, status or kill");
    }

    /**
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(execute(args, System.getenv(), System.out, System.err));
    }

    /**
     * @param args the command line
     * @param env  the environment
     * @param out  standard output
     * @param err  standard error
     * @return the exit status
     */
    static int execute(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        RunCommand.Launch launch = new RunCommand.Launch(env, out, err);
        CommandLine cli = new CommandLine(new MpiproxyCommand())
                .addSubcommand("run", new RunCommand(launch))
                .addSubcommand("status", new StatusCommand(launch))
                .addSubcommand("kill", new KillCommand(launch));
        cli.getSubcommands().get("run").setStopAtPositional(true);
        cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setExitCodeExceptionMapper(e -> 2);
        cli.setParameterExceptionHandler((e, a) -> {
            err.println("mpiproxy: " + e.getMessage());
            e.getCommandLine().usage(err);
            return 2;
        });
        return cli.execute(args);
    }
}
