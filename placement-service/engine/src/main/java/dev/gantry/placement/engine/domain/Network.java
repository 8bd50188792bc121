package dev.gantry.placement.engine.domain;

/** Network locality: a hard {@code required} level and a wished-for {@code preferred} level (nullable). */
public record Network(NetworkLevel required, NetworkLevel preferred) {
    public static final Network ANY = new Network(NetworkLevel.ANY, null);

    public Network {
        required = required == null ? NetworkLevel.ANY : required;
    }
}
