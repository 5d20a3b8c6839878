"""Schemathesis hook of the suite's fuzz run (schemathesis.test.ts): what a client knows and no schema can say.

A valid request must also carry values that are new or that exist, which an OpenAPI document
cannot state; left alone, the fuzzer's generated requests stop at those checks instead of
reaching the handlers. For valid requests only (invalid ones keep what was generated, and must
be refused), as a client would:
- an `Idempotency-Key` of its own for each request (a key reused with another request is 422);
- an email nobody has for a new account (the fuzzer repeats one: "is already taken");
- the fuzz run's own account as the user an operator publishes events to (an id the fuzzer
  makes up is "no such user"; SHIPHOOK_FUZZ_USER_ID);
- a webhook URL that answers (SHIPHOOK_FUZZ_RECEIVER_URL): a webhook whose deliveries fail is
  soon disabled, and then refuses a test event or a recovery, as it should.
"""
import itertools
import os
import uuid

import schemathesis

USER_ID = os.environ.get("SHIPHOOK_FUZZ_USER_ID")
RECEIVER_URL = os.environ.get("SHIPHOOK_FUZZ_RECEIVER_URL")
_fresh = itertools.count()


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    meta = case.meta
    if meta is None or meta.generation.mode.is_negative or any(c.mode.is_negative for c in meta.components.values()):
        return
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
    body = case.body if isinstance(case.body, dict) else None
    if body is None:
        return
    operation = f"{case.method.upper()} {case.path}"
    if operation == "POST /admin/v1/users" and isinstance(body.get("email"), str):
        email = body["email"].strip()
        if len(email) < 240:
            body["email"] = f"n{next(_fresh)}.{email}"
    if RECEIVER_URL and operation == "POST /v2/webhooks":
        fields = body["webhook"] if isinstance(body.get("webhook"), dict) else body
        if isinstance(fields.get("url"), str):
            fields["url"] = RECEIVER_URL
    if USER_ID and operation == "POST /admin/v1/events" and "user_id" in body:
        body["user_id"] = USER_ID
    if USER_ID and operation == "POST /admin/v1/events/batch" and isinstance(body.get("events"), list):
        for event in body["events"]:
            if isinstance(event, dict) and "user_id" in event:
                event["user_id"] = USER_ID
