package org.mpiproxy.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import javax.imageio.ImageIO;

/** Line charts with a log2 x axis, drawn with Java2D (headless) into PNG files. */
final class Plot {

    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
        new Color(0x9467bd)};

    /** One line: a name and its y values at the shared x values. */
    record Series(String name, double[] y) {
    }

    private Plot() {
    }

    static void write(Path file, String title, String xLabel, String yLabel, int[] x, List<Series> series)
            throws IOException {
        int w = 800;
        int h = 480;
        int left = 80;
        int right = 20;
        int top = 50;
        int bottom = 60;
        BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        double maxY = 0;
        for (Series s : series) {
            for (double v : s.y()) {
                maxY = Math.max(maxY, v);
            }
        }
        maxY = niceCeiling(maxY);
        double minLog = log2(x[0]);
        double maxLog = Math.max(log2(x[x.length - 1]), minLog + 1);
        int plotW = w - left - right;
        int plotH = h - top - bottom;
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.setColor(new Color(0xdddddd));
        for (int i = 0; i <= 5; i++) {
            int yy = top + plotH - plotH * i / 5;
            g.drawLine(left, yy, left + plotW, yy);
        }
        g.setColor(Color.BLACK);
        g.drawRect(left, top, plotW, plotH);
        for (int i = 0; i <= 5; i++) {
            int yy = top + plotH - plotH * i / 5;
            String label = String.format(Locale.ROOT, maxY >= 10 ? "%.0f" : "%.1f", maxY * i / 5);
            g.drawString(label, left - 8 - g.getFontMetrics().stringWidth(label), yy + 4);
        }
        for (int xv : x) {
            int xx = left + (int) Math.round((log2(xv) - minLog) / (maxLog - minLog) * plotW);
            g.drawLine(xx, top + plotH, xx, top + plotH + 4);
            String label = Integer.toString(xv);
            g.drawString(label, xx - g.getFontMetrics().stringWidth(label) / 2, top + plotH + 18);
        }
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.drawString(title, left, 30);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.drawString(xLabel, left + plotW / 2 - g.getFontMetrics().stringWidth(xLabel) / 2, h - 20);
        Graphics2D rotated = (Graphics2D) g.create();
        rotated.rotate(-Math.PI / 2);
        rotated.drawString(yLabel, -(top + plotH / 2 + g.getFontMetrics().stringWidth(yLabel) / 2), 18);
        rotated.dispose();
        g.setStroke(new BasicStroke(2f));
        for (int s = 0; s < series.size(); s++) {
            Series line = series.get(s);
            g.setColor(COLORS[s % COLORS.length]);
            int px = -1;
            int py = -1;
            for (int i = 0; i < x.length; i++) {
                int xx = left + (int) Math.round((log2(x[i]) - minLog) / (maxLog - minLog) * plotW);
                int yy = top + plotH - (int) Math.round(line.y()[i] / maxY * plotH);
                g.fillOval(xx - 3, yy - 3, 7, 7);
                if (px >= 0) {
                    g.drawLine(px, py, xx, yy);
                }
                px = xx;
                py = yy;
            }
            g.drawString(line.name(), left + 12, top + 18 + 16 * s);
        }
        g.dispose();
        ImageIO.write(image, "png", file.toFile());
    }

    private static double log2(double v) {
        return Math.log(v) / Math.log(2);
    }

    private static double niceCeiling(double v) {
        if (v <= 0) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }
}
