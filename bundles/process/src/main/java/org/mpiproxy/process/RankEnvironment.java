package org.mpiproxy.process;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A rank's clean environment: only the proxy's variables named on an allowlist, then the
 * rank's own variables ({@link RankCommand#environment}: what the job asked for, JAVA_HOME and
 * MPIPROXY_*). Nothing else of the proxy's environment (credentials, Karaf's settings) reaches
 * a rank. Stateless and thread-safe.
 */
public final class RankEnvironment {

    /** Default allowlist: what programs commonly need to run, find their tools and speak the locale. */
    public static final String DEFAULT_ALLOWLIST = "PATH,HOME,USER,LOGNAME,SHELL,LANG,LANGUAGE,LC_*,TZ,TMPDIR";

    private RankEnvironment() {
    }

    /**
     * @param text comma-separated names; a trailing {@code *} matches any suffix
     * @return the names, trimmed, empty ones dropped
     * @throws IllegalArgumentException when a name contains {@code '='} or a {@code '*'} not at its end
     */
    public static List<String> parseAllowlist(String text) {
        List<String> names = new ArrayList<>();
        for (String part : (text == null ? "" : text).split(",")) {
            String name = part.trim();
            if (name.isEmpty()) {
                continue;
            }
            if (name.indexOf('=') >= 0 || name.indexOf('*') >= 0 && name.indexOf('*') != name.length() - 1) {
                throw new IllegalArgumentException("environment.allowlist=" + text + ": '" + name
                        + "' is not a variable name (optionally ending in *)");
            }
            names.add(name);
        }
        return Collections.unmodifiableList(names);
    }

    /**
     * @param proxyEnvironment the proxy's environment
     * @param allowlist        names (or prefixes ending in {@code *}) passed on from it
     * @param rankVariables    the rank's own variables; they win over the proxy's
     * @return the complete environment of the rank (a new, ordered map)
     */
    public static Map<String, String> build(Map<String, String> proxyEnvironment, List<String> allowlist,
                                            Map<String, String> rankVariables) {
        Map<String, String> env = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : proxyEnvironment.entrySet()) {
            if (allowed(e.getKey(), allowlist)) {
                env.put(e.getKey(), e.getValue());
            }
        }
        env.putAll(rankVariables);
        return env;
    }

    static boolean allowed(String name, List<String> allowlist) {
        for (String entry : allowlist) {
            if (entry.endsWith("*") ? name.startsWith(entry.substring(0, entry.length() - 1)) : name.equals(entry)) {
                return true;
            }
        }
        return false;
    }
}
