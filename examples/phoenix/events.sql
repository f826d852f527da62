-- A Phoenix table keyed by tenant and time (newest first), salted into 8 buckets, and a global
-- index on the event type. keyshape reads this DDL as the key schema: keyshape analyze, key, lint.
CREATE TABLE EVENTS (
    TENANT VARCHAR NOT NULL,
    EVENT_TIME TIMESTAMP NOT NULL,
    EVENT_ID BIGINT NOT NULL,
    EVENT_TYPE VARCHAR,
    PAYLOAD VARBINARY
    CONSTRAINT PK PRIMARY KEY (TENANT, EVENT_TIME DESC, EVENT_ID)
) SALT_BUCKETS = 8;

CREATE INDEX EVENTS_BY_TYPE ON EVENTS (EVENT_TYPE);
