package dev.gantry.simulator.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** JFreeChart charts rendered to PNG and returned as data URIs, so report.html stands alone. */
public final class Charts {
    private static final int W = 900;
    private static final int H = 420;

    private Charts() {
    }

    /** Lines: series name -> {x[], y[]}. {@code logX} for delay CDFs. */
    public static String lines(String title, String xLabel, String yLabel, Map<String, double[][]> series, boolean logX, Double ceiling) {
        XYSeriesCollection data = new XYSeriesCollection();
        for (var e : series.entrySet()) {
            XYSeries s = new XYSeries(e.getKey(), false, true);
            double[] x = e.getValue()[0];
            double[] y = e.getValue()[1];
            for (int i = 0; i < x.length; i++) {
                if (!logX || x[i] > 0) {
                    s.add(x[i], y[i]);
                }
            }
            data.addSeries(s);
        }
        JFreeChart chart = ChartFactory.createXYLineChart(title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        style(chart);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            plot.getRenderer().setSeriesStroke(i, new BasicStroke(1.6f));
        }
        if (logX) {
            LogAxis axis = new LogAxis(xLabel);
            axis.setSmallestValue(1);
            plot.setDomainAxis(axis);
        }
        if (ceiling != null) {
            ValueMarker m = new ValueMarker(ceiling, Color.DARK_GRAY, new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1f,
                    new float[] {6f, 4f}, 0f));
            m.setLabel("ceiling " + ceiling);
            m.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
            m.setLabelTextAnchor(TextAnchor.BOTTOM_RIGHT);
            plot.addRangeMarker(m);
        }
        return png(chart);
    }

    /** Bars per policy, with a dashed line at the lower (or upper) bound when given. */
    public static String bars(String title, String yLabel, Map<String, Double> values, Double bound, String boundLabel) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        values.forEach((k, v) -> data.addValue(v, yLabel, k));
        JFreeChart chart = ChartFactory.createBarChart(title, "policy", yLabel, data, PlotOrientation.VERTICAL, false, false, false);
        style(chart);
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        if (bound != null) {
            ValueMarker m = new ValueMarker(bound, Color.RED, new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1f,
                    new float[] {6f, 4f}, 0f));
            m.setLabel(boundLabel);
            m.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
            m.setLabelTextAnchor(TextAnchor.BOTTOM_RIGHT);
            plot.addRangeMarker(m);
            if (plot.getRangeAxis().getUpperBound() < bound * 1.05) {
                plot.getRangeAxis().setUpperBound(bound * 1.1);
            }
        }
        return png(chart);
    }

    private static void style(JFreeChart chart) {
        chart.setBackgroundPaint(Color.WHITE);
        chart.setAntiAlias(true);
    }

    private static String png(JFreeChart chart) {
        try {
            byte[] bytes = ChartUtils.encodeAsPNG(chart.createBufferedImage(W, H));
            return "data:image/png;base64," + Base64.getEncoder().encodeToString(bytes);
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode chart", e);
        }
    }

    public static <V> Map<String, V> ordered() {
        return new LinkedHashMap<>();
    }
}
