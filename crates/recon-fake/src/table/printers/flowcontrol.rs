//! API priority and fairness's printers (pkg/printers/internalversion/printers.go:
//! `printFlowSchema`, `printPriorityLevelConfiguration`).

use recon_apimachinery::json::Value;

use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, at, int_at, list_at, name, str_at, text};

pub(super) const FLOW_SCHEMA: Printer = Printer {
    group: "flowcontrol.apiserver.k8s.io",
    kind: "FlowSchema",
    columns: &[
        NAME,
        text(
            "PriorityLevel",
            "`name` is the name of the priority level configuration being referenced Required.",
        ),
        text(
            "MatchingPrecedence",
            "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.",
        ),
        text(
            "DistinguisherMethod",
            "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.",
        ),
        AGE,
        text(
            "MissingPL",
            "references a broken or non-existent PriorityLevelConfiguration",
        ),
    ],
    row: |obj, now| {
        let method = match at(obj, &["spec", "distinguisherMethod"]).filter(|m| m.is_object()) {
            Some(m) => m
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            None => "<none>".to_owned(),
        };
        // The first Dangling condition's status, `?` without one.
        let missing = list_at(obj, &["status", "conditions"])
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some("Dangling"))
            .map_or("?", |c| {
                c.get("status").and_then(Value::as_str).unwrap_or("")
            });
        Row::new(vec![
            name(obj),
            Cell::text(str_at(obj, &["spec", "priorityLevelConfiguration", "name"])),
            Cell::Int(int_at(obj, &["spec", "matchingPrecedence"])),
            Cell::text(method),
            age_of(obj, now),
            Cell::text(missing),
        ])
    },
};

pub(super) const PRIORITY_LEVEL: Printer = Printer {
    group: "flowcontrol.apiserver.k8s.io",
    kind: "PriorityLevelConfiguration",
    columns: &[
        NAME,
        text(
            "Type",
            "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required.",
        ),
        text(
            "NominalConcurrencyShares",
            "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)",
        ),
        text(
            "Queues",
            "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.",
        ),
        text(
            "HandSize",
            "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.",
        ),
        text(
            "QueueLengthLimit",
            "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.",
        ),
        AGE,
    ],
    row: |obj, now| {
        // Numbers when the level is limited (and queues), `<none>` otherwise.
        let none = || Cell::text("<none>");
        let limited = at(obj, &["spec", "limited"]).filter(|l| l.is_object());
        let shares = limited.map_or_else(none, |l| {
            Cell::Int(
                l.get("nominalConcurrencyShares")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
            )
        });
        let queuing = limited
            .and_then(|l| l.get("limitResponse"))
            .and_then(|r| r.get("queuing"))
            .filter(|q| q.is_object());
        let queue = |key: &str| {
            queuing.map_or_else(none, |q| {
                Cell::Int(q.get(key).and_then(Value::as_i64).unwrap_or(0))
            })
        };
        Row::new(vec![
            name(obj),
            Cell::text(str_at(obj, &["spec", "type"])),
            shares,
            queue("queues"),
            queue("handSize"),
            queue("queueLengthLimit"),
            age_of(obj, now),
        ])
    },
};
