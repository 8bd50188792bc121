package dev.gantry.placement.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** The latest {@code quota.shares} payload (a single row, id 1); an older one never replaces it. */
@Entity
@Table(name = "quota_shares")
public class QuotaSharesRecord extends PanacheEntityBase {

    public static final int ID = 1;

    @Id
    public Integer id;

    /** The {@code QuotaShares} JSON as received. */
    @Column(nullable = false, columnDefinition = "text")
    public String shares;

    @Column(name = "computed_at", nullable = false)
    public Instant computedAt;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;
}
