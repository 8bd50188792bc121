package dev.gantry.inventory.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import io.smallrye.mutiny.Uni;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.LockModeType;
import jakarta.persistence.Table;

/**
 * The inventory's snapshot version (one row). Every write locks it first ({@code for update}), so
 * writes are serialised and each change gets the next number; a snapshot reads it {@code for share},
 * so it sees the nodes exactly as of that version. Stored, so a restart continues from it.
 */
@Entity
@Table(name = "inventory_version")
public class InventoryVersion extends PanacheEntityBase {

    @Id
    public Integer id;

    @Column(nullable = false)
    public long version;

    /** Locks the version row for a write; call first in the transaction. */
    public static Uni<InventoryVersion> lockForWrite() {
        return findById(1, LockModeType.PESSIMISTIC_WRITE);
    }

    /** Reads the version while holding off writers until the reading transaction ends. */
    public static Uni<InventoryVersion> lockForRead() {
        return findById(1, LockModeType.PESSIMISTIC_READ);
    }

    /** The next version, for one change (persisted when the transaction commits). */
    public long next() {
        return ++version;
    }
}
