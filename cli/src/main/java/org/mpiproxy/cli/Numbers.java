package org.mpiproxy.cli;

/** Strict decimal parsing and printable echoes for parser messages. */
final class Numbers {

    private Numbers() {
    }

    /** @return the value of 1-9 ASCII digits if within [min, max], else -1 */
    static int parse(String text, int min, int max) {
        if (text.isEmpty() || text.length() > 9) {
            return -1;
        }
        int value = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value >= min && value <= max ? value : -1;
    }

    /** @return the dotted address when {@code text} is an IPv4 literal, else {@code null} */
    static String ipv4(String text) {
        String[] octets = text.split("\\.", -1);
        if (octets.length != 4) {
            return null;
        }
        for (String o : octets) {
            if (o.length() > 3 || parse(o, 0, 255) < 0) {
                return null;
            }
        }
        return text;
    }

    static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), 120));
        for (int i = 0; i < s.length() && i < 120; i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return s.length() > 120 ? b.append("...").toString() : b.toString();
    }
}
