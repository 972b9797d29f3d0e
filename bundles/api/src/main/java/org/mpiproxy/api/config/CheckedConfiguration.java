package org.mpiproxy.api.config;

import java.lang.annotation.Annotation;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The typed view of a component's configuration, built from its raw properties by strict rules,
 * and the last good configuration the component ran with.
 * <p>
 * Declarative Services coerces raw properties itself, leniently: a {@code boolean} attribute
 * read from {@code yes} is {@code false}, an {@code int} read from {@code ten} fails with a
 * stack trace. Components therefore take their raw properties and build their configuration
 * here, where each attribute of the annotation type is checked by its return type:
 * <ul>
 *   <li>{@code boolean}: exactly {@code true} or {@code false}, in any case;</li>
 *   <li>{@code int}, {@code long}: a whole number within the type's range;</li>
 *   <li>{@code String}: a single value (lists are comma-separated text).</li>
 * </ul>
 * A missing key takes the attribute's default. Ranges, paths and lists are checked by the
 * component when it turns the typed view into its settings.
 * <p>
 * An instance remembers the last configuration a component accepted; components keep one in a
 * static field so that a re-activation with bad values continues with it. Thread-safe.
 *
 * @param <A> the configuration annotation type
 */
public final class CheckedConfiguration<A extends Annotation> {

    private final Class<A> type;
    private final Map<String, Method> attributes;
    /** The PID reported under, with where reports go; {@code null} when this instance reports nothing. */
    private final String pid;
    private final ConfigurationReports reports;
    /** Gets the one warning line per unknown key. */
    private final Consumer<String> warnings;
    private volatile A lastGood;

    /**
     * A configuration whose refusals and unknown keys are reported to {@link ConfigurationReports#node()}.
     *
     * @param pid      the configuration PID
     * @param type     the configuration annotation type
     * @param warnings gets one line per unknown key, the first time it is seen
     */
    public CheckedConfiguration(String pid, Class<A> type, Consumer<String> warnings) {
        this(pid, type, warnings, ConfigurationReports.node());
    }

    /**
     * As {@link #CheckedConfiguration(String, Class, Consumer)}, reporting to {@code reports}.
     */
    public CheckedConfiguration(String pid, Class<A> type, Consumer<String> warnings, ConfigurationReports reports) {
        this(type, Objects.requireNonNull(pid, "pid"), Objects.requireNonNull(warnings, "warnings"),
                Objects.requireNonNull(reports, "reports"));
    }

    /**
     * @param type the configuration annotation type; its attributes must be of the types above
     * @throws IllegalArgumentException when an attribute has another type (a programming error)
     */
    public CheckedConfiguration(Class<A> type) {
        this(type, null, null, null);
    }

    private CheckedConfiguration(Class<A> type, String pid, Consumer<String> warnings, ConfigurationReports reports) {
        this.pid = pid;
        this.warnings = warnings;
        this.reports = reports;
        this.type = Objects.requireNonNull(type, "type");
        Map<String, Method> byKey = new LinkedHashMap<>();
        // sorted: reflection returns methods in no particular order, and the first bad key named must not vary
        Method[] methods = type.getDeclaredMethods();
        java.util.Arrays.sort(methods, java.util.Comparator.comparing(m -> key(m.getName())));
        for (Method m : methods) {
            if (Modifier.isStatic(m.getModifiers()) || m.getParameterCount() != 0) {
                continue;
            }
            Class<?> r = m.getReturnType();
            if (r != boolean.class && r != int.class && r != long.class && r != String.class) {
                throw new IllegalArgumentException(type.getName() + "." + m.getName() + " has unsupported type "
                        + r.getName());
            }
            byKey.put(key(m.getName()), m);
        }
        this.attributes = Collections.unmodifiableMap(byKey);
    }

    /**
     * @return the configuration keys of the annotation's attributes, sorted
     */
    public List<String> keys() {
        return new ArrayList<>(attributes.keySet());
    }

    /**
     * @param key a configuration key
     * @return the return type of its attribute ({@code boolean.class}, {@code int.class},
     *         {@code long.class} or {@code String.class}), or {@code null} for an unknown key
     */
    public Class<?> typeOf(String key) {
        Method m = attributes.get(key);
        return m == null ? null : m.getReturnType();
    }

    /**
     * Builds the typed view of raw properties. Keys that are not attributes are ignored (and,
     * with a PID, warned about once each and reported).
     *
     * @param properties the raw properties (strings from {@code .cfg} files, or typed values)
     * @return the typed view; its values never change
     * @throws IllegalArgumentException {@code key=value is not ...}, naming the first bad key
     */
    public A typed(Map<String, ?> properties) {
        if (reports != null) {
            reports.keys(pid, properties, attributes.keySet(), warnings);
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (Map.Entry<String, Method> e : attributes.entrySet()) {
            Method m = e.getValue();
            Object raw = properties == null ? null : properties.get(e.getKey());
            values.put(m.getName(), raw == null ? m.getDefaultValue() : convert(e.getKey(), raw, m.getReturnType()));
        }
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> invoke(values, proxy, method, args)));
    }

    /**
     * @return the configuration last passed to {@link #remember}, or {@code null} when none was
     */
    public A lastGood() {
        return lastGood;
    }

    /**
     * @param config a configuration the component now runs with
     */
    public void remember(A config) {
        lastGood = Objects.requireNonNull(config, "config");
        if (reports != null) {
            reports.accepted(pid);
        }
    }

    /**
     * Reports a refused value (with a PID) while the component keeps its last good configuration,
     * or, with none, does not run.
     *
     * @param line the one-line reason, as logged
     * @return the line
     */
    public String refused(String line) {
        if (reports != null) {
            reports.refused(pid, line, lastGood != null);
        }
        return line;
    }

    /**
     * The configuration of an activation: the raw properties when they are good, else the last
     * good configuration. Remembers what it returns.
     *
     * @param properties the raw properties
     * @param validate   checks a typed view as the component does (builds its settings),
     *                   throwing {@link IllegalArgumentException} naming the bad key and value
     * @param problems   gets the one line that says what was wrong and what happens now
     * @return the configuration to run with
     * @throws RejectedConfigurationException when the properties are bad and there is no last
     *                                        good configuration: the component does not start
     */
    public A activation(Map<String, ?> properties, Function<A, ?> validate, Consumer<String> problems) {
        A config;
        try {
            config = typed(properties);
            validate.apply(config);
        } catch (IllegalArgumentException e) {
            A previous = lastGood;
            if (previous == null) {
                String line = e.getMessage() + "; no good configuration yet: not started until the value is fixed";
                refused(pid + ": " + line);
                problems.accept(line);
                throw new RejectedConfigurationException(line);
            }
            String line = e.getMessage() + "; keeping the last good configuration";
            refused(pid + ": " + line);
            problems.accept(line);
            return previous;
        }
        remember(config);
        return config;
    }

    /**
     * @param name an attribute method name
     * @return its configuration key, as Declarative Services maps it ({@code a_b} is {@code a.b},
     *         {@code a__b} is {@code a_b}, {@code $$} is {@code $}, a single {@code $} is dropped)
     */
    static String key(String name) {
        StringBuilder b = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            char next = i + 1 < name.length() ? name.charAt(i + 1) : 0;
            if (c == '_') {
                if (next == '_') {
                    b.append('_');
                    i++;
                } else {
                    b.append('.');
                }
            } else if (c == '$') {
                if (next == '$') {
                    b.append('$');
                    i++;
                }
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static Object convert(String key, Object raw, Class<?> to) {
        Object value = single(key, raw);
        if (to == String.class) {
            return value.toString();
        }
        if (to == boolean.class) {
            if (value instanceof Boolean) {
                return value;
            }
            String text = value.toString().trim().toLowerCase(Locale.ROOT);
            if (text.equals("true") || text.equals("false")) {
                return Boolean.valueOf(text);
            }
            throw bad(key, raw, "true or false");
        }
        long n;
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            n = ((Number) value).longValue();
        } else if (value instanceof String) {
            try {
                n = Long.parseLong(((String) value).trim());
            } catch (NumberFormatException e) {
                throw bad(key, raw, "a whole number");
            }
        } else {
            throw bad(key, raw, "a whole number");
        }
        if (to == int.class) {
            if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
                throw bad(key, raw, "a whole number in " + Integer.MIN_VALUE + ".." + Integer.MAX_VALUE);
            }
            return (int) n;
        }
        return n;
    }

    /** One value: a scalar, or an array or collection of exactly one. */
    private static Object single(String key, Object raw) {
        List<Object> all = new ArrayList<>();
        if (raw.getClass().isArray()) {
            for (int i = 0; i < Array.getLength(raw); i++) {
                all.add(Array.get(raw, i));
            }
        } else if (raw instanceof Collection) {
            all.addAll((Collection<?>) raw);
        } else {
            return raw;
        }
        if (all.size() != 1 || all.get(0) == null) {
            throw new IllegalArgumentException(key + "=" + all + " is not a single value (lists are comma-separated"
                    + " text)");
        }
        return all.get(0);
    }

    private static IllegalArgumentException bad(String key, Object raw, String expected) {
        return new IllegalArgumentException(key + "=" + raw + " is not " + expected);
    }

    private Object invoke(Map<String, Object> values, Object proxy, Method method, Object[] args) {
        switch (method.getName()) {
            case "annotationType":
                return type;
            case "toString":
                return type.getSimpleName() + values;
            case "hashCode":
                return values.hashCode();
            case "equals":
                return args != null && args.length == 1 && args[0] == proxy;
            default:
                return values.get(method.getName());
        }
    }
}
