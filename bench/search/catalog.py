"""The catalog `bench/search` serves: N tools named `{service}_{verb}_{thing}`, each with a title,
a description and two to four described arguments, the same for every server; and queries whose
intended tool is known, in a few word orders with stop words and plurals ("archive a invoice in
stripe", "stripe invoices archive"). They use the name's own words: what they measure is ranking
among thousands of tools that share those words, not understanding of synonyms."""

from __future__ import annotations

import random

SERVICES = [
    "stripe",
    "github",
    "jira",
    "slack",
    "salesforce",
    "zendesk",
    "hubspot",
    "notion",
    "gdrive",
    "shopify",
]
VERBS = [
    ("get", "Gets"),
    ("list", "Lists"),
    ("create", "Creates"),
    ("update", "Updates"),
    ("delete", "Deletes"),
    ("search", "Searches for"),
    ("export", "Exports"),
    ("import", "Imports"),
    ("archive", "Archives"),
    ("restore", "Restores"),
    ("send", "Sends"),
    ("assign", "Assigns"),
    ("approve", "Approves"),
    ("reject", "Rejects"),
    ("merge", "Merges"),
    ("tag", "Tags"),
    ("share", "Shares"),
    ("schedule", "Schedules"),
    ("summarize", "Summarizes"),
    ("sync", "Syncs"),
]
THINGS = [
    "invoice",
    "customer",
    "order",
    "email",
    "image",
    "file",
    "ticket",
    "event",
    "report",
    "user",
    "payment",
    "shipment",
    "refund",
    "subscription",
    "comment",
    "issue",
    "branch",
    "channel",
    "message",
    "contact",
    "lead",
    "deal",
    "task",
    "project",
    "page",
    "folder",
    "product",
    "coupon",
    "review",
    "webhook",
    "team",
    "role",
    "note",
    "meeting",
    "survey",
    "campaign",
    "quote",
    "contract",
    "asset",
    "label",
    "milestone",
    "release",
    "account",
    "address",
    "receipt",
    "budget",
    "forecast",
    "policy",
    "dashboard",
    "alert",
]
FIELDS = [
    ("id", "The {thing}'s identifier."),
    ("status", "Only {thing}s in this state (open, closed, pending)."),
    ("owner", "Who the {thing} belongs to (an email address)."),
    ("since", "The earliest creation date, as ISO 8601."),
    ("limit", "At most this many results."),
    ("note", "A comment recorded with the change."),
    ("currency", "A three-letter currency code."),
    ("folder", "Where in the workspace to look."),
]


def catalog(count: int) -> list[dict]:
    """`count` tools (at most 10,000), in a fixed order."""
    tools = []
    for service in SERVICES:
        for verb, verbed in VERBS:
            for thing in THINGS:
                tools.append((service, verb, verbed, thing))
    if count > len(tools):
        raise ValueError(f"at most {len(tools)} tools")
    rng = random.Random(7)
    rng.shuffle(tools)
    out = []
    for service, verb, verbed, thing in tools[:count]:
        fields = rng.sample(FIELDS, rng.randint(2, 4))
        properties = {name: {"type": "string", "description": text.format(thing=thing)} for name, text in fields}
        out.append(
            {
                "name": f"{service}_{verb}_{thing}",
                "title": f"{verb.capitalize()} {thing} ({service.capitalize()})",
                "description": f"{verbed} a {thing} in {service.capitalize()}. "
                f"Uses the {service.capitalize()} API; needs a connected account.",
                "inputSchema": {"type": "object", "properties": properties, "required": [fields[0][0]]},
            }
        )
    return out


def queries(tools: list[dict], count: int) -> list[tuple[str, str]]:
    """`count` (query, intended tool) pairs."""
    rng = random.Random(11)
    picked = rng.sample(tools, count)
    shapes = ["{verb} a {thing} in {service}", "{verb} {service} {things}", "{thing} {verb} {service}"]
    out = []
    for at, tool in enumerate(picked):
        service, verb, thing = tool["name"].split("_")
        if thing.endswith("y"):
            things = thing[:-1] + "ies"
        elif thing.endswith(("s", "x", "ch", "sh")):
            things = thing + "es"
        else:
            things = thing + "s"
        query = shapes[at % len(shapes)].format(verb=verb, thing=thing, things=things, service=service)
        out.append((query, tool["name"]))
    return out
