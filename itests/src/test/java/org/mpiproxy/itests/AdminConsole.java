package org.mpiproxy.itests;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.security.auth.Subject;

import org.apache.karaf.jaas.boot.principal.RolePrincipal;
import org.apache.karaf.jaas.boot.principal.UserPrincipal;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.api.console.SessionFactory;

/**
 * Runs console commands as the shipped operator (user karaf with roles admin, manager and
 * viewer), so that commands guarded by the command ACLs (mpi:stop, mpi:exec, bundle:update,
 * config:property-set) are visible and allowed, exactly as for that user over SSH.
 */
final class AdminConsole {

    private AdminConsole() {
    }

    static String execute(SessionFactory sessions, String command, Duration timeout) throws Exception {
        return execute(sessions, command, timeout, "admin", "manager", "viewer");
    }

    static String execute(SessionFactory sessions, String command, Duration timeout, String... roles)
            throws Exception {
        Subject subject = new Subject();
        subject.getPrincipals().add(new UserPrincipal("karaf"));
        for (String role : roles) {
            subject.getPrincipals().add(new RolePrincipal(role));
        }
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        PrintStream print = new PrintStream(output, true, StandardCharsets.UTF_8);
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (Session session = sessions.create(new ByteArrayInputStream(new byte[0]), print, print)) {
            PrivilegedExceptionAction<Object> run = () -> session.execute(command);
            Future<Object> result = executor.submit(() -> Subject.doAs(subject, run));
            Object value;
            try {
                value = result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof java.security.PrivilegedActionException) {
                    cause = cause.getCause();
                }
                throw cause instanceof Exception ? (Exception) cause : e;
            } catch (TimeoutException e) {
                result.cancel(true);
                throw new AssertionError("'" + command + "' did not finish within " + timeout + "; output so far:\n"
                        + output.toString(StandardCharsets.UTF_8), e);
            }
            print.flush();
            String text = output.toString(StandardCharsets.UTF_8);
            return value == null ? text : text + value;
        } finally {
            executor.shutdownNow();
        }
    }
}
