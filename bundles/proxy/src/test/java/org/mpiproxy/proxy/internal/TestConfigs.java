package org.mpiproxy.proxy.internal;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;

/** Builds configuration annotations the way DS does: {@code a_b()} reads key {@code a.b}, else the default. */
final class TestConfigs {

    private TestConfigs() {
    }

    static <A> A of(Class<A> type, Map<String, Object> values) {
        Object proxy = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (p, method, args) -> value(type, method, values));
        return type.cast(proxy);
    }

    private static Object value(Class<?> type, Method method, Map<String, Object> values) {
        switch (method.getName()) {
            case "annotationType":
                return type;
            case "toString":
                return type.getSimpleName() + values;
            case "hashCode":
                return values.hashCode();
            case "equals":
                return false;
            default:
                String key = method.getName().replace('_', '.');
                return values.containsKey(key) ? values.get(key) : method.getDefaultValue();
        }
    }
}
