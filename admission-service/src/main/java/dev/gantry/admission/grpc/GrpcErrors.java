package dev.gantry.admission.grpc;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.Code;
import dev.gantry.admission.quota.QuotaUnavailableException;
import dev.gantry.kit.outbox.EventTooLargeException;
import dev.gantry.kit.problem.InvalidRequestException;
import dev.gantry.kit.problem.Problem;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import jakarta.ws.rs.NotFoundException;

/**
 * The REST API's problems as gRPC statuses: the same cases, the same words, and the wrong fields as
 * {@code google.rpc.BadRequest} details so clients can point at them.
 */
final class GrpcErrors {

    private GrpcErrors() {
    }

    static Throwable toStatus(Throwable failure) {
        if (failure instanceof StatusRuntimeException) {
            return failure;
        }
        if (failure instanceof InvalidRequestException e) {
            return status(codeFor(e.status()), e.getMessage(), e);
        }
        if (failure instanceof UnauthorizedException) {
            return status(Code.UNAUTHENTICATED, "a bearer token is required (authorization: Bearer <JWT>)", null);
        }
        if (failure instanceof ForbiddenException e) {
            return status(Code.PERMISSION_DENIED, e.getMessage(), null);
        }
        if (failure instanceof NotFoundException e) {
            return status(Code.NOT_FOUND, e.getMessage(), null);
        }
        if (failure instanceof QuotaUnavailableException) {
            return status(Code.UNAVAILABLE, "the quota check is unavailable right now, nothing was stored; retry shortly", null);
        }
        if (failure instanceof EventTooLargeException e) {
            return status(Code.INVALID_ARGUMENT, "the job is too large to pass on: " + e.getMessage() + "; nothing was stored", null);
        }
        if (failure instanceof IllegalArgumentException e) {
            return status(Code.INVALID_ARGUMENT, e.getMessage(), null);
        }
        return status(Code.INTERNAL, "an unexpected error occurred; it has been logged", null);
    }

    static StatusRuntimeException status(Code code, String message, InvalidRequestException fields) {
        com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder().setCode(code.getNumber()).setMessage(message);
        if (fields != null && !fields.errors().isEmpty()) {
            BadRequest.Builder bad = BadRequest.newBuilder();
            for (Problem.FieldError error : fields.errors()) {
                bad.addFieldViolations(BadRequest.FieldViolation.newBuilder().setField(error.field()).setDescription(error.message()));
            }
            status.addDetails(Any.pack(bad.build()));
        }
        return StatusProto.toStatusRuntimeException(status.build());
    }

    private static Code codeFor(int httpStatus) {
        return switch (httpStatus) {
            case 400 -> Code.INVALID_ARGUMENT;
            case 403 -> Code.PERMISSION_DENIED;
            case 404 -> Code.NOT_FOUND;
            case 409 -> Code.ABORTED;
            case 413 -> Code.INVALID_ARGUMENT;
            case 422 -> Code.FAILED_PRECONDITION;
            case 429 -> Code.RESOURCE_EXHAUSTED;
            case 503 -> Code.UNAVAILABLE;
            default -> Code.UNKNOWN;
        };
    }
}
