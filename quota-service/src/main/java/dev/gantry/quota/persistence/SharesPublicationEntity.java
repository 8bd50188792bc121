package dev.gantry.quota.persistence;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** The one row that remembers the last quota.shares put into the outbox. */
@Entity
@Table(name = "shares_publication")
public class SharesPublicationEntity extends PanacheEntityBase {

    public static final int ID = 1;

    @Id
    public Integer id;

    @Column(nullable = false)
    public String fingerprint;

    @Column(name = "published_at", nullable = false)
    public Instant publishedAt;
}
