package dev.gantry.testing;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Reads the service's database over plain JDBC, independently of the code under test. */
@ApplicationScoped
public class TestDatabase {

    @Inject
    AgroalDataSource dataSource;

    public long queryLong(String sql, Object... args) {
        Object value = query(sql, args);
        return value == null ? 0 : ((Number) value).longValue();
    }

    public String queryString(String sql, Object... args) {
        Object value = query(sql, args);
        return value == null ? null : value.toString();
    }

    public int execute(String sql, Object... args) {
        try (Connection connection = dataSource.getConnection()) {
            return update(connection, sql, args);
        } catch (SQLException e) {
            throw new IllegalStateException("no connection for: " + sql, e);
        }
    }

    private static int update(Connection connection, String sql, Object... args) {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            bind(statement, args);
            return statement.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("test statement failed: " + sql, e);
        }
    }

    /**
     * A transaction of its own, left open until {@link OpenTransaction#commit} (or rolled back on close): for
     * tests of what the code under test does while another writer holds rows it needs.
     */
    public OpenTransaction begin() {
        try {
            Connection connection = dataSource.getConnection();
            connection.setAutoCommit(false);
            return new OpenTransaction(connection);
        } catch (SQLException e) {
            throw new IllegalStateException("could not open a transaction", e);
        }
    }

    /** See {@link #begin}. */
    public static final class OpenTransaction implements AutoCloseable {
        private final Connection connection;
        private boolean done;

        private OpenTransaction(Connection connection) {
            this.connection = connection;
        }

        public int execute(String sql, Object... args) {
            return update(connection, sql, args);
        }

        public void commit() {
            try {
                connection.commit();
                done = true;
            } catch (SQLException e) {
                throw new IllegalStateException("commit failed", e);
            }
        }

        @Override
        public void close() {
            try (connection) {
                if (!done) {
                    connection.rollback();
                }
            } catch (SQLException e) {
                throw new IllegalStateException("rollback failed", e);
            }
        }
    }

    private static void bind(PreparedStatement statement, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            statement.setObject(i + 1, args[i]);
        }
    }

    private Object query(String sql, Object... args) {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            bind(statement, args);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? rows.getObject(1) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("test query failed: " + sql, e);
        }
    }
}
