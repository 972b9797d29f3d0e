package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.mpiproxy.protocol.ClusterKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the proxy's configuration into {@link V2Settings}: node name, key files (generating the default one),
 * the limits and the lifetime of the credentials it issues.
 */
final class V2Config {

    /** Node name when none is configured: the address of the demo hostfile. */
    static final String DEFAULT_NODE_NAME = "127.0.0.1";
    /** Default key file name in {@code ${karaf.etc}}. */
    static final String DEFAULT_KEY_FILE = "mpiproxy.key";

    private static final Logger LOG = LoggerFactory.getLogger(V2Config.class);

    private V2Config() {
    }

    /**
     * @param config the proxy configuration
     * @return the v2 settings
     * @throws IllegalArgumentException saying exactly what is wrong (a key file, a value)
     */
    static V2Settings settings(ProxyConfig config) {
        return settings(config, keyFiles(config));
    }

    /**
     * @param config the proxy configuration
     * @param files  its key files, from {@link #keyFiles}
     * @return the v2 settings
     * @throws IllegalArgumentException saying exactly what is wrong (a key file: missing, open to others,
     *                                  of another owner, short or weak; a value)
     */
    static V2Settings settings(ProxyConfig config, Map<Integer, Path> files) {
        if (config.v2_skew_seconds() < 0) {
            throw new IllegalArgumentException("v2.skew.seconds=" + config.v2_skew_seconds() + " must be >= 0");
        }
        String node = nodeName(config);
        // checked at every start and every change: a refused key file leaves the keys in force
        return new V2Settings(ClusterKeys.loadStrong(files), node, Duration.ofSeconds(config.v2_skew_seconds()),
                config.v2_replay_cache_size(), config.v2_datagram_size(),
                Duration.ofSeconds(config.v2_job_linger_seconds()), config.v2_max_message_bytes(),
                config.stage_max_bytes(), config.v2_replay_source_share(), config.v2_credentials_max(),
                config.rank_root_allowed(), NodeLimits.of(config), config.identity_credential_seconds());
    }

    /**
     * @param config the proxy configuration
     * @return this node's name ({@code node.name}; empty means {@value #DEFAULT_NODE_NAME})
     */
    static String nodeName(ProxyConfig config) {
        return config.node_name().isBlank() ? DEFAULT_NODE_NAME : config.node_name().trim();
    }

    /**
     * @param config the proxy configuration
     * @return the key files by key id, the signing key first; the default one is generated when
     *         missing and {@code v2.key.generate} is set
     * @throws IllegalArgumentException when the list is bad or the default file cannot be created
     */
    static Map<Integer, Path> keyFiles(ProxyConfig config) {
        return keyFiles(config, config.v2_key_generate());
    }

    /**
     * @param config   the proxy configuration
     * @param generate whether the default key file is generated when missing
     * @return the key files by key id, the signing key first
     * @throws IllegalArgumentException when the list is bad or the default file cannot be created
     */
    static Map<Integer, Path> keyFiles(ProxyConfig config, boolean generate) {
        String etc = System.getProperty("karaf.etc");
        Path base = etc != null && !etc.isBlank() ? Path.of(etc) : Path.of(System.getProperty("user.dir"));
        String spec = config.v2_key_files().trim();
        Map<Integer, Path> files;
        if (spec.isEmpty()) {
            if (etc == null || etc.isBlank()) {
                throw new IllegalArgumentException("v2.key.files is not configured and karaf.etc is not set");
            }
            Path file = base.resolve(DEFAULT_KEY_FILE);
            if (generate) {
                generate(file);
            }
            files = Map.of(1, file);
        } else {
            files = ClusterKeys.parseFileList(spec, base);
        }
        return files;
    }

    private static void generate(Path file) {
        try {
            if (ClusterKeys.generateIfMissing(file)) {
                LOG.info("generated the v2 cluster key {} (mode 0600); copy it to every node and host of the cluster",
                        file);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot create key file " + file + ": " + e);
        }
    }
}
