package dev.gantry.admission.rest;

import java.util.List;

/** One page of jobs; pass {@code nextCursor} as {@code cursor} for the next one (null: no more). */
public record JobPage(List<JobView> items, String nextCursor) {
}
