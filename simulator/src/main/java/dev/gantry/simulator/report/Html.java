package dev.gantry.simulator.report;

import java.util.Map;

/** The few HTML pieces the reports share; inline CSS, no scripts, no external resources. */
final class Html {
    private Html() {
    }

    static void head(StringBuilder b, String title) {
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>").append(esc(title)).append("</title>\n")
                .append("<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}")
                .append("pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:12px}")
                .append("table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;font-size:13px}")
                .append("img{display:block;margin:1em 0;max-width:100%}</style></head><body>\n");
    }

    static void runTable(StringBuilder b, Map<String, Object> run) {
        b.append("<table>\n");
        run.forEach((k, v) -> b.append("<tr><th>").append(esc(k)).append("</th><td>").append(esc(String.valueOf(v))).append("</td></tr>\n"));
        b.append("</table>\n");
    }

    static void img(StringBuilder b, String dataUri) {
        b.append("<img alt=\"chart\" src=\"").append(dataUri).append("\">\n");
    }

    static void tail(StringBuilder b) {
        b.append("</body></html>\n");
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
