package org.mpiproxy.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** A list of measurements with the order statistics the report prints. */
final class Samples {

    private final List<Double> values = new ArrayList<>();

    void add(double value) {
        values.add(value);
    }

    /** @return the values in the order they were added */
    List<Double> values() {
        return Collections.unmodifiableList(values);
    }

    int size() {
        return values.size();
    }

    double min() {
        return sorted().get(0);
    }

    double max() {
        List<Double> s = sorted();
        return s.get(s.size() - 1);
    }

    double median() {
        return percentile(50);
    }

    double percentile(double p) {
        List<Double> s = sorted();
        if (s.isEmpty()) {
            return Double.NaN;
        }
        int index = (int) Math.ceil(p / 100.0 * s.size()) - 1;
        return s.get(Math.max(0, Math.min(s.size() - 1, index)));
    }

    private List<Double> sorted() {
        if (values.isEmpty()) {
            throw new IllegalStateException("no samples");
        }
        List<Double> s = new ArrayList<>(values);
        Collections.sort(s);
        return s;
    }

    /** @return "median (min–max)" with the given format, e.g. "%.1f" */
    String summary(String format) {
        if (values.isEmpty()) {
            return "n/a";
        }
        return String.format(Locale.ROOT, format + " (" + format + "–" + format + ")", median(), min(), max());
    }
}
