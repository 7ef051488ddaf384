package io.sluice.admin;

/** A request the API refuses: its HTTP status and the one line of {@code {"error": "..."}}. */
final class ApiException extends RuntimeException {
    final int status;

    ApiException(int status, String message) {
        super(message);
        this.status = status;
    }
}
