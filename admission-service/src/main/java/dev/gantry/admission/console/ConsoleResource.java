package dev.gantry.admission.console;

import dev.gantry.admission.domain.Caller;
import dev.gantry.admission.domain.JobState;
import dev.gantry.admission.security.Callers;
import dev.gantry.admission.streams.OpenStreams;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.jwt.auth.principal.JWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.jboss.resteasy.reactive.RestStreamElementType;

/**
 * The web console at {@code /}: login with a token, then the cluster heat map, the queues and the
 * jobs, server-rendered; {@code /console/updates} tells open pages when to refresh. The token is
 * kept in an HttpOnly cookie that the API's JWT verification also reads.
 */
@Path("/")
@Produces(MediaType.TEXT_HTML)
public class ConsoleResource {

    public static final String COOKIE = "gantry_token";
    private static final int MAX_JOB_ROWS = 200;

    /** Who is looking, for the page header; {@code active} names the current page in the navigation. */
    public record Viewer(String user, String teams, boolean admin, List<String> teamList, String active) {
    }

    @CheckedTemplate(basePath = "console")
    static class Templates {
        static native TemplateInstance login(String error, String csrf);

        static native TemplateInstance cluster(Viewer viewer, ClusterMap map, String problem);

        static native TemplateInstance queues(Viewer viewer, QueueBoard board, String problem);

        static native TemplateInstance jobs(Viewer viewer, List<JobRow> jobs, String problem, ConsoleData.JobFilter filter,
                List<String> queueNames, List<String> states);
    }

    @Inject
    JsonWebToken token;

    @Inject
    Callers callers;

    @Inject
    JWTParser parser;

    @Inject
    ConsoleData data;

    @Inject
    OpenStreams streams;

    @ConfigProperty(name = "gantry.console.refresh-interval", defaultValue = "2s")
    Duration refreshInterval;

    /** Cookies with the Secure flag: always when true, else when the request came over HTTPS (itself or through a proxy). */
    @ConfigProperty(name = "gantry.console.secure-cookies", defaultValue = "false")
    boolean secureCookies;

    @jakarta.ws.rs.core.Context
    HttpHeaders headers;

    @jakarta.ws.rs.core.Context
    UriInfo uri;

    private boolean secure() {
        return secureCookies || "https".equalsIgnoreCase(uri.getRequestUri().getScheme())
                || "https".equalsIgnoreCase(headers.getHeaderString("X-Forwarded-Proto"));
    }

    /** The login page with a fresh anti-forgery token in its form and its cookie. */
    private Response loginPage(int status, String error) {
        String csrf = ConsoleCsrf.newToken();
        return Response.status(status).entity(Templates.login(error, csrf)).cookie(ConsoleCsrf.cookie(csrf, secure())).build();
    }

    @GET
    public Response home() {
        return redirect(loggedIn() ? "/cluster" : "/login");
    }

    @GET
    @Path("login")
    public Response loginPage(@QueryParam("expired") String expired) {
        return loginPage(200, expired == null ? null : "Your session has ended; log in again.");
    }

    /** Checks the token with the same verification as the API before keeping it: a bad one is 401 and not stored. */
    @POST
    @Path("login")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response login(@FormParam("token") String raw, @FormParam(ConsoleCsrf.FIELD) String csrf) {
        if (!ConsoleCsrf.matches(headers.getCookies().get(ConsoleCsrf.COOKIE), csrf)) {
            // a login form posted from another site (login CSRF: the victim would work in the attacker's session)
            return loginPage(403, "This login form has expired or did not come from this console; log in again.");
        }
        String text = raw == null ? "" : raw.strip();
        if (text.regionMatches(true, 0, "Bearer ", 0, 7)) {
            text = text.substring(7).strip();
        }
        if (text.isEmpty()) {
            return loginPage(400, "Paste a token: bin/gantry token USER --team TEAM");
        }
        JsonWebToken parsed;
        try {
            parsed = parser.parse(text);
        } catch (ParseException e) {
            return loginPage(401, "That token was not accepted: it is malformed, expired or not signed with this cluster's key.");
        }
        long maxAge = Math.max(1, parsed.getExpirationTime() - System.currentTimeMillis() / 1000);
        // the cookie lives as long as the token, so an expired token is never sent
        NewCookie cookie = new NewCookie.Builder(COOKIE).value(text).path("/").httpOnly(true).secure(secure())
                .sameSite(NewCookie.SameSite.STRICT).maxAge((int) Math.min(Integer.MAX_VALUE, maxAge)).build();
        // a new session gets a new anti-forgery token
        return Response.seeOther(URI.create("/cluster")).cookie(cookie, ConsoleCsrf.cookie(ConsoleCsrf.newToken(), secure())).build();
    }

    @POST
    @Path("logout")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response logout(@FormParam(ConsoleCsrf.FIELD) String csrf) {
        if (!ConsoleCsrf.matches(headers.getCookies().get(ConsoleCsrf.COOKIE), csrf)) {
            return Response.status(403).entity(Templates.login("Not logged out: the request did not come from this console.", null)).build();
        }
        return Response.seeOther(URI.create("/login")).cookie(expiredCookie()).build();
    }

    static NewCookie expiredCookie() {
        return new NewCookie.Builder(COOKIE).value("").path("/").httpOnly(true).sameSite(NewCookie.SameSite.STRICT).maxAge(0).build();
    }

    @GET
    @Path("cluster")
    public Uni<Response> cluster() {
        if (!loggedIn()) {
            return Uni.createFrom().item(redirect("/login"));
        }
        Caller caller = callers.current();
        return data.cluster(caller).map(part -> Response.ok(Templates.cluster(viewer(caller, "cluster"), part.value(), part.problem()))
                .build());
    }

    @GET
    @Path("queues")
    public Uni<Response> queues() {
        if (!loggedIn()) {
            return Uni.createFrom().item(redirect("/login"));
        }
        Caller caller = callers.current();
        return data.queues().map(part -> Response.ok(Templates.queues(viewer(caller, "queues"), part.value(), part.problem())).build());
    }

    @GET
    @Path("jobs")
    public Uni<Response> jobs(@QueryParam("scope") String scope, @QueryParam("queue") String queue, @QueryParam("state") String state) {
        if (!loggedIn()) {
            return Uni.createFrom().item(redirect("/login"));
        }
        Caller caller = callers.current();
        ConsoleData.JobFilter filter = filter(scope, queue, state, caller);
        return Uni.combine().all().unis(data.jobs(filter, caller, MAX_JOB_ROWS), data.queueNames()).asTuple()
                .map(t -> Response.ok(Templates.jobs(viewer(caller, "jobs"), t.getItem1().value(), t.getItem1().problem(), filter,
                        t.getItem2(), List.of(JobState.values()).stream().map(Enum::name).toList())).build());
    }

    /**
     * Server-Sent Events for open console pages: an event whenever what they show changed (jobs,
     * allocations, nodes), so they refresh without reloading. Polls, so changes made through any
     * replica or any service are seen.
     */
    @GET
    @Path("console/updates")
    @Produces(MediaType.SERVER_SENT_EVENTS)
    @RestStreamElementType(MediaType.TEXT_PLAIN)
    public Multi<String> updates() {
        Caller caller = callers.current();
        // Hibernate Reactive needs the request's Vert.x context; ticks fire on another thread
        Context context = Vertx.currentContext();
        return streams.open(caller, () -> Multi.createFrom().ticks().every(refreshInterval)
                .emitOn(task -> context.runOnContext(ignored -> task.run()))
                .onItem().transformToUniAndConcatenate(tick -> data.fingerprint(caller))
                .skip().repetitions());
    }

    private static ConsoleData.JobFilter filter(String scope, String queue, String state, Caller caller) {
        String s = scope == null || scope.isBlank() ? ConsoleData.JobFilter.TEAM : scope.toLowerCase(Locale.ROOT);
        if (!Set.of(ConsoleData.JobFilter.MINE, ConsoleData.JobFilter.TEAM, ConsoleData.JobFilter.ALL).contains(s)
                || (s.equals(ConsoleData.JobFilter.ALL) && !caller.admin())) {
            s = ConsoleData.JobFilter.TEAM;
        }
        JobState jobState = null;
        if (state != null && !state.isBlank()) {
            try {
                jobState = JobState.valueOf(state.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException ignored) {
                // an unknown state in a hand-edited URL filters nothing
            }
        }
        return new ConsoleData.JobFilter(s, queue == null || queue.isBlank() ? null : queue.strip(), jobState);
    }

    private boolean loggedIn() {
        return token.getRawToken() != null;
    }

    private static Viewer viewer(Caller caller, String active) {
        List<String> teams = caller.teams().stream().sorted().toList();
        return new Viewer(caller.user(), String.join(", ", teams), caller.admin(), teams, active);
    }

    private static Response redirect(String path) {
        return Response.seeOther(URI.create(path)).build();
    }
}
