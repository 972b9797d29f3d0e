package org.mpiproxy.proxy.internal;

import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.RejectedConfigurationException;

/**
 * Turns the proxy's configuration ({@link ProxyConfig}) into the settings its parts use, checking
 * the ranges the metatype cannot express; each bad value is an {@link IllegalArgumentException}
 * naming its key.
 */
final class ProxyConfigs {

    /** Longest path of a Unix socket on Linux ({@code sun_path} less its terminating zero). */
    static final int MAX_SOCKET_PATH_BYTES = 107;

    private ProxyConfigs() {
    }

    /**
     * Checks what the proxy's own checks cover, except the v2 keys (v2 may fail alone), and the
     * directories it writes that exist already ({@link ProxyDirectories#check}).
     *
     * @param config the configuration
     * @return {@code config}
     * @throws IllegalArgumentException naming the first bad key and its value
     */
    static ProxyConfig validate(ProxyConfig config) {
        if (config.startup_wait_seconds() < 0) {
            throw new IllegalArgumentException("startup.wait.seconds=" + config.startup_wait_seconds()
                    + " must be >= 0");
        }
        settings(config);
        supervision(config);
        LaunchPool.threads(config.launch_threads(), 1);
        stateDirectory(config);
        LogRetention.Limits.of(config.log_retention_days(), config.log_retention_megabytes());
        StagedRetention.Limits.of(config);
        if (config.stage_max_bytes() < 0) {
            throw new IllegalArgumentException("stage.max.bytes=" + config.stage_max_bytes()
                    + " must be >= 0 (0: no staging)");
        }
        ProxyDirectories.check(config);
        localSocket(config);
        CredentialIssuer.lifetime(config.identity_credential_seconds());
        NodeLimits.of(config);
        NodeTopology.Settings.of(config);
        return config;
    }

    /**
     * @param config the configuration
     * @return the local socket's path ({@code local.socket}), {@code null} when it is off (empty)
     * @throws IllegalArgumentException when it is not an absolute path a Unix socket may have
     */
    static java.nio.file.Path localSocket(ProxyConfig config) {
        String configured = config.local_socket() == null ? "" : config.local_socket().trim();
        if (configured.isEmpty()) {
            return null;
        }
        java.nio.file.Path path;
        try {
            path = java.nio.file.Path.of(configured);
        } catch (java.nio.file.InvalidPathException e) {
            throw new IllegalArgumentException("local.socket=" + configured + " is not a valid path: " + e.getReason(), e);
        }
        if (!path.isAbsolute() || path.getParent() == null) {
            throw new IllegalArgumentException("local.socket=" + configured + " must be an absolute path of a file");
        }
        if (configured.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_SOCKET_PATH_BYTES) {
            throw new IllegalArgumentException("local.socket=" + configured + " is longer than " + MAX_SOCKET_PATH_BYTES
                    + " bytes, the most a Unix socket's path may have");
        }
        return path;
    }

    static java.nio.file.Path stateDirectory(ProxyConfig config) {
        String configured = config.state_directory();
        if (configured != null && !configured.isBlank()) {
            try {
                return java.nio.file.Path.of(configured.trim());
            } catch (java.nio.file.InvalidPathException e) {
                throw new IllegalArgumentException("state.directory=" + configured + " is not a valid path: "
                        + e.getReason(), e);
            }
        }
        return ProxySettings.resolveLogDirectory("").resolveSibling("state");
    }

    static SupervisionSettings supervision(ProxyConfig config) {
        if (config.job_timeout_seconds() < 0) {
            throw new IllegalArgumentException("job.timeout.seconds=" + config.job_timeout_seconds()
                    + " must be >= 0");
        }
        if (config.host_silence_seconds() < 0) {
            throw new IllegalArgumentException("host.silence.seconds=" + config.host_silence_seconds()
                    + " must be >= 0");
        }
        return new SupervisionSettings(config.abort_on_failure(), Duration.ofSeconds(config.job_timeout_seconds()),
                Duration.ofSeconds(config.host_silence_seconds()));
    }

    static ProxySettings settings(ProxyConfig config) {
        if (config.terminate_timeout_seconds() < 0) {
            throw new IllegalArgumentException("terminate.timeout.seconds=" + config.terminate_timeout_seconds()
                    + " must be >= 0");
        }
        if (config.stop_grace_seconds() < 0) {
            throw new IllegalArgumentException("stop.grace.seconds=" + config.stop_grace_seconds() + " must be >= 0");
        }
        if (config.restart_survive_seconds() < 0) {
            throw new IllegalArgumentException("restart.survive.seconds=" + config.restart_survive_seconds()
                    + " must be >= 0");
        }
        if (config.handover_seconds() < 0) {
            throw new IllegalArgumentException("handover.seconds=" + config.handover_seconds() + " must be >= 0");
        }
        return new ProxySettings(ProxySettings.resolveLogDirectory(config.log_directory()),
                config.hold_limit_bytes(), Duration.ofSeconds(config.terminate_timeout_seconds()),
                Duration.ofSeconds(config.stop_grace_seconds()));
    }

    /**
     * The outcome of checking an activation's configuration.
     *
     * @param config   the configuration to run with, {@code null} when rejected
     * @param rejected why the proxy does not start, {@code null} when it does
     */
    record Accepted(ProxyConfig config, RejectedConfigurationException rejected) {
    }

    /**
     * Checks an activation's raw configuration: bad values are given to {@code problems} in one
     * line each, and the last good configuration is used instead; with none, the proxy does not start.
     */
    static Accepted accept(Map<String, Object> properties, CheckedConfiguration<ProxyConfig> configurations,
                           Consumer<String> problems) {
        try {
            return new Accepted(configurations.activation(properties, ProxyConfigs::validate,
                    line -> problems.accept(ProxyComponent.PID + ": " + line)), null);
        } catch (RejectedConfigurationException e) {
            return new Accepted(null, e);
        }
    }
}
