package dev.gantry.kit.sql;

/**
 * The {@code VALUES} rows of a set-based statement with numbered parameters, each cast to its column's
 * type (a native query's parameters carry no type of their own, and a null must still know its type):
 * {@code ValuesList.of(2, true, "uuid", "text")} is
 * {@code (cast(?1 as uuid), cast(?2 as text), 0), (cast(?3 as uuid), cast(?4 as text), 1)}; with
 * {@code ordinal}, a last column numbers the rows (0, 1, ...) so a statement can keep their order.
 */
public final class ValuesList {

    private ValuesList() {
    }

    public static String of(int rows, boolean ordinal, String... types) {
        StringBuilder values = new StringBuilder();
        int parameter = 1;
        for (int row = 0; row < rows; row++) {
            values.append(row == 0 ? "(" : ", (");
            for (int column = 0; column < types.length; column++) {
                values.append(column == 0 ? "" : ", ").append("cast(?").append(parameter++).append(" as ").append(types[column]).append(')');
            }
            if (ordinal) {
                values.append(", ").append(row);
            }
            values.append(')');
        }
        return values.toString();
    }
}
