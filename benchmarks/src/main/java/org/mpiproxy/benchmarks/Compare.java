package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Puts the goal tables of two revisions' harness pages side by side: {@code benchmarks/compare.sh}
 * runs each phase with an older revision's harness and with this checkout's, alternately, and
 * gives the pages here. For every goal row both pages have, it shows each side's figure and
 * ratio to its anchor (measured in the same page), and the new ratio over the old one: above 1
 * the new revision does better when the goal asks for more, below 1 when it asks for less.
 * <p>
 * {@code java ... Compare <out.md> <old label> <new label> <old page>... -- <new page>...}
 */
public final class Compare {

    /** A goal row: what, anchor, ours, ratio, goal, met. */
    record Row(String what, String anchor, String ours, String ratio, String goal) {
    }

    private static final Pattern NUMBER = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)x");

    private Compare() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 4) {
            System.err.println("usage: Compare <out.md> <old label> <new label> <old page>... -- <new page>...");
            System.exit(64);
        }
        Path out = Path.of(args[0]);
        List<Path> oldPages = new ArrayList<>();
        List<Path> newPages = new ArrayList<>();
        boolean second = false;
        for (int i = 3; i < args.length; i++) {
            if (args[i].equals("--")) {
                second = true;
            } else {
                (second ? newPages : oldPages).add(Path.of(args[i]));
            }
        }
        Files.writeString(out, render(args[1], args[2], read(oldPages), read(newPages), loads(oldPages),
                loads(newPages)), StandardCharsets.UTF_8);
        System.out.println("written " + out);
    }

    /** @return the goal rows of the pages, by their first column, one per page that has it (rounds) */
    static Map<String, List<Row>> read(List<Path> pages) throws IOException {
        Map<String, List<Row>> rows = new LinkedHashMap<>();
        for (Path page : pages) {
            for (Row row : goalRows(Files.readAllLines(page, StandardCharsets.UTF_8))) {
                rows.computeIfAbsent(row.what(), k -> new ArrayList<>()).add(row);
            }
        }
        return rows;
    }

    /** @return the rows of the page's goal table */
    static List<Row> goalRows(List<String> lines) {
        List<Row> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : lines) {
            if (line.startsWith("| what | anchor | ours | ratio | goal |")) {
                inTable = true;
                continue;
            }
            if (!inTable) {
                continue;
            }
            if (!line.startsWith("|")) {
                break;
            }
            String[] cells = line.split("\\|");
            if (cells.length >= 6 && !cells[1].trim().startsWith("---")) {
                rows.add(new Row(cells[1].trim(), cells[2].trim(), cells[3].trim(), cells[4].trim(), cells[5].trim()));
            }
        }
        return rows;
    }

    private static List<String> loads(List<Path> pages) throws IOException {
        List<String> loads = new ArrayList<>();
        for (Path page : pages) {
            for (String line : Files.readAllLines(page, StandardCharsets.UTF_8)) {
                if (line.startsWith("| load average at")) {
                    loads.add(line.split("\\|")[2].trim());
                }
            }
        }
        return loads;
    }

    /** @return the median of the first ratio ("0.68x raw" and the like) of the rows, or NaN when none has one */
    static double medianRatio(List<Row> rows) {
        List<Double> values = new ArrayList<>();
        for (Row row : rows) {
            Matcher m = NUMBER.matcher(row.ratio());
            if (m.find()) {
                values.add(Double.parseDouble(m.group(1)));
            }
        }
        if (values.isEmpty()) {
            return Double.NaN;
        }
        values.sort(null);
        int n = values.size();
        return n % 2 == 1 ? values.get(n / 2) : (values.get(n / 2 - 1) + values.get(n / 2)) / 2;
    }

    /**
     * @return new over old of the median ratios, or "-" when either has none; for goals of the form
     *         {@code <=} (less is better) the inverse, so that above 1 always means better
     */
    static String change(List<Row> old, List<Row> now) {
        double o = medianRatio(old);
        double n = medianRatio(now);
        if (Double.isNaN(o) || Double.isNaN(n) || o == 0 || n == 0) {
            return "-";
        }
        String goal = now.get(0).goal();
        boolean lessIsBetter = goal.startsWith("<=") || goal.startsWith("adds <=");
        return String.format(Locale.ROOT, "%.2f", lessIsBetter ? o / n : n / o);
    }

    private static String figures(List<Row> rows) {
        List<String> parts = new ArrayList<>();
        for (Row row : rows) {
            parts.add(row.ours() + " (" + row.ratio() + ")");
        }
        return String.join("; ", parts);
    }

    static String render(String oldLabel, String newLabel, Map<String, List<Row>> old, Map<String, List<Row>> now,
                         List<String> oldLoads, List<String> newLoads) {
        StringBuilder b = new StringBuilder();
        b.append("# Two revisions side by side\n\n");
        b.append("Generated by `benchmarks/compare.sh`: each phase run with the harness of ").append(oldLabel)
                .append(" and with that of ").append(newLabel).append(", alternately, on this machine. Ratios are to the")
                .append(" anchors each page measured itself. \"new / old\": the new ratio over the old one, above 1")
                .append(" when the new revision does better (for goals of the form <=, the inverse).\n\n");
        b.append("Load averages, old pages: ").append(String.join("; ", oldLoads)).append("\n\n");
        b.append("Load averages, new pages: ").append(String.join("; ", newLoads)).append("\n\n");
        b.append("| what | old: ours (ratio), each round | new: ours (ratio), each round | new / old (medians) |\n")
                .append("| --- | --- | --- | --- |\n");
        for (Map.Entry<String, List<Row>> e : now.entrySet()) {
            List<Row> o = old.get(e.getKey());
            if (o == null) {
                continue;
            }
            b.append("| ").append(e.getKey()).append(" | ").append(figures(o)).append(" | ").append(figures(e.getValue()))
                    .append(" | ").append(change(o, e.getValue())).append(" |\n");
        }
        List<String> onlyNew = new ArrayList<>(now.keySet());
        onlyNew.removeAll(old.keySet());
        if (!onlyNew.isEmpty()) {
            b.append("\nRows only the new harness has: ").append(String.join("; ", onlyNew)).append(".\n");
        }
        return b.toString();
    }
}
