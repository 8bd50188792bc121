package dev.gantry.admission.quota;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Sends the admission checks of concurrent submissions to quota together. A check goes at once when
 * none is being answered; checks that arrive meanwhile wait and go as one batch when the answer
 * comes (up to {@link #MAX_BATCH}). Under a burst of 40 submitters this turns 2,000 HTTP exchanges
 * into a few hundred, each costing quota and admission about what one check did (issue 18 item 6),
 * and a quota slow to answer (a cold start) gets fewer, larger requests instead of a pile of
 * concurrent ones it cannot serve in time. Alone, a check waits for nothing.
 * <p>
 * An exchange that fails for good (after {@link QuotaCalls}' retries, or with the circuit open, or
 * quota refusing the whole request) fails each of its checks the same way; a check quota found
 * malformed (400 in its place) fails alone with {@link QuotaRefusedRequestException}. Each answer is
 * handed back on its caller's Vert.x context.
 */
public final class CoalescedChecks {

    /** What quota takes in one batch. */
    public static final int MAX_BATCH = 500;

    /** One exchange with quota for these checks, answered in their order ({@link QuotaCalls} in production). */
    public interface Quota {
        Uni<QuotaClient.BatchResult> send(List<QuotaClient.CheckRequest> checks);
    }

    private record Waiting(QuotaClient.CheckRequest request, CompletableFuture<QuotaClient.CheckResult> answer, Context context) {
    }

    private final Quota quota;
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private boolean sending;

    public CoalescedChecks(Quota quota) {
        this.quota = quota;
    }

    public Uni<QuotaClient.CheckResult> check(QuotaClient.CheckRequest request) {
        return Uni.createFrom().deferred(() -> {
            CompletableFuture<QuotaClient.CheckResult> answer = new CompletableFuture<>();
            Context context = Vertx.currentContext();
            synchronized (waiting) {
                waiting.add(new Waiting(request, answer, context));
            }
            sendNext();
            return Uni.createFrom().completionStage(answer);
        });
    }

    /** Sends what waits, unless a request is out: its answer sends the next. */
    private void sendNext() {
        List<Waiting> batch = new ArrayList<>();
        synchronized (waiting) {
            if (sending || waiting.isEmpty()) {
                return;
            }
            sending = true;
            while (!waiting.isEmpty() && batch.size() < MAX_BATCH) {
                batch.add(waiting.poll());
            }
        }
        Uni<List<Answer>> answers = Uni.createFrom().deferred(() -> quota.send(batch.stream().map(Waiting::request).toList()))
                .map(result -> answersFor(batch, result));
        answers.subscribe().with(list -> {
            done();
            for (int i = 0; i < batch.size(); i++) {
                Answer answer = list.get(i);
                Waiting w = batch.get(i);
                hand(w, f -> {
                    if (answer.failure() != null) {
                        f.completeExceptionally(answer.failure());
                    } else {
                        f.complete(answer.result());
                    }
                });
            }
        }, failure -> {
            done();
            batch.forEach(w -> hand(w, f -> f.completeExceptionally(failure)));
        });
    }

    private void done() {
        synchronized (waiting) {
            sending = false;
        }
        sendNext();
    }

    private static void hand(Waiting w, Consumer<CompletableFuture<QuotaClient.CheckResult>> completion) {
        if (w.context() != null) {
            w.context().runOnContext(ignored -> completion.accept(w.answer()));
        } else {
            completion.accept(w.answer());
        }
    }

    private record Answer(QuotaClient.CheckResult result, RuntimeException failure) {
        static Answer of(QuotaClient.CheckResult result) {
            return new Answer(result, null);
        }
    }

    private static List<Answer> answersFor(List<Waiting> batch, QuotaClient.BatchResult result) {
        List<QuotaClient.BatchAnswer> results = result == null || result.results() == null ? List.of() : result.results();
        if (results.size() != batch.size()) {
            // quota answered something else than what was asked: no check may pass on it
            IllegalStateException wrong = new IllegalStateException(
                    "quota answered " + results.size() + " checks to a batch of " + batch.size());
            return batch.stream().map(w -> new Answer(null, wrong)).toList();
        }
        List<Answer> answers = new ArrayList<>();
        for (QuotaClient.BatchAnswer a : results) {
            if (a.status() == 200 && a.answer() != null) {
                answers.add(Answer.of(a.answer()));
            } else if (a.status() >= 400 && a.status() < 500) {
                answers.add(new Answer(null, new QuotaRefusedRequestException(a.status(), String.valueOf(a.detail()))));
            } else {
                answers.add(new Answer(null, new IllegalStateException("quota could not answer a check (" + a.status() + ")")));
            }
        }
        return answers;
    }
}
