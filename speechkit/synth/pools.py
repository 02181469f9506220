"""Fixed pools the latent state is sampled from: names, roles, project templates, jargon.

Jargon entries are ``(canonical, verbatim, tts)``: the written form, the words a transcriber
writes for what is said, and what the TTS engine is told to say (same number of words as
the verbatim form; respellings make the engines pronounce identifiers the way people do).
"""
from __future__ import annotations

ORGS = ("Clearflow Payments", "Northwind Logistics", "Halcyon Health", "Brightline Analytics",
        "Keystone Retail", "Meridian Labs")

FIRST_NAMES = (("Marcus", "Marc"), ("Simone", None), ("Devon", None), ("Priya", None), ("Dillon", "Dill"),
               ("Yuki", None), ("Rafael", "Rafa"), ("Adriana", "Adri"), ("Everett", None), ("Renata", None),
               ("Tobias", "Toby"), ("Ingrid", None), ("Kwame", None), ("Beatrice", "Bea"), ("Oscar", None),
               ("Helena", "Lena"), ("Samuel", "Sam"), ("Naomi", None), ("Victor", "Vic"), ("Alice", None))
SURNAMES = ("Delacroix", "Okafor", "Ashby", "Nambiar", "Hargrove", "Tanaka", "Quintero", "Castellanos",
            "Whitfield", "Sokolowski", "Lindqvist", "Mensah", "Ferreira", "Brennan", "Harlow", "Pillai")
ROLES = ("engineering manager", "senior engineer", "product manager", "site reliability engineer",
         "compliance lead", "sales engineer", "data engineer", "QA lead", "solutions architect",
         "finance analyst")
BACKCHANNELS = ("yeah", "right", "okay", "mm-hmm", "sure", "got it", "makes sense", "uh-huh")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")

# Each project template: name (canonical, verbatim, tts), jargon, numbers (topic, kind, unit),
# tasks (verb phrases; {j} is one of the project's jargon terms), statuses, decisions.
PROJECTS = (
    {
        "name": ("SettleMap", "SettleMap", "settle-map"),
        "topic": "the ISO migration",
        "jargon": (("pacs.008", "pacs dot zero zero eight", "packs dot zero zero eight"),
                   ("pacs.002", "pacs dot zero zero two", "packs dot zero zero two"),
                   ("camt.054", "camt dot zero five four", "cammt dot zero five four"),
                   ("pain.001", "pain dot zero zero one", "pain dot zero zero one"),
                   ("MT103", "MT one oh three", "em-tee one oh three"),
                   ("BIC", "BIC", "bick"),
                   ("LEI", "LEI", "el-ee-eye"),
                   ("XSD", "XSD", "ex-ess-dee")),
        "numbers": (("the cut-over date", "date", ""), ("the test batch", "count", "messages"),
                    ("the rejection rate", "percent", ""), ("the open ticket", "ticket", "")),
        "tasks": ("map the remaining {j} fields", "write the validation rules for {j}",
                  "check the {j} samples with the bank", "update the {j} test vectors"),
        "statuses": ("the {j} mapping is mostly done", "we're still blocked on {j}",
                     "the {j} schema changed again", "{j} is passing validation now"),
        "decisions": (("how we handle {j}", ("a translation layer", "a hard cut-over")),
                      ("the {j} rollout", ("a phased rollout", "a single weekend switch"))),
    },
    {
        "name": ("Orchestrate", "Orchestrate", "orchestrate"),
        "topic": "the failover work",
        "jargon": (("P99", "P ninety nine", "pee ninety nine"),
                   ("CAS", "CAS", "kass"),
                   ("etcd", "etcd", "et-see-dee"),
                   ("gRPC", "gRPC", "jee-arr-pee-see"),
                   ("RTO", "RTO", "arr-tee-oh"),
                   ("Kafka", "Kafka", "kafka"),
                   ("v2.4.1", "version two point four point one", "version two point four point one"),
                   ("idempotency key", "idempotency key", "eye-dem-potency key")),
        "numbers": (("the latency budget", "ms", "milliseconds"), ("the failover window", "seconds", "seconds"),
                    ("the error rate", "percent", ""), ("the release date", "date", "")),
        "tasks": ("write up the {j} design", "add a load test for {j}", "fix the {j} alerting",
                  "benchmark {j} under failover"),
        "statuses": ("{j} is looking better since the fix", "we saw a spike in {j} again",
                     "the {j} change is in review", "{j} is still flaky in staging"),
        "decisions": (("the locking approach for {j}", ("a global lock", "a lock-free {j} path")),
                      ("when to ship {j}", ("next sprint", "after the load test"))),
    },
    {
        "name": ("Brindlewood", "Brindlewood", "brindle-wood"),
        "topic": "the enterprise deal",
        "jargon": (("SOC 2", "SOC two", "sock two"),
                   ("SAML", "SAML", "sammel"),
                   ("SSO", "SSO", "ess-ess-oh"),
                   ("DPA", "DPA", "dee-pee-ay"),
                   ("SCIM", "SCIM", "skim"),
                   ("RFP", "RFP", "arr-eff-pee"),
                   ("MSA", "MSA", "em-ess-ay"),
                   ("BDW sandbox", "BDW sandbox", "bee-dee-double-you sandbox")),
        "numbers": (("the contract value", "money", ""), ("the seat count", "count", "seats"),
                    ("the signing date", "date", ""), ("the discount", "percent", "")),
        "tasks": ("send them the {j} report", "set up {j} for their pilot", "review the {j} redlines",
                  "schedule the {j} walkthrough"),
        "statuses": ("legal is still on the {j}", "they signed off on {j}", "they asked again about {j}",
                     "the {j} questions are answered"),
        "decisions": (("how we price {j}", ("a flat fee", "per seat")),
                      ("who owns {j}", ("sales", "the platform team"))),
    },
    {
        "name": ("Lakehouse", "Lakehouse", "lake-house"),
        "topic": "the data platform",
        "jargon": (("dbt", "dbt", "dee-bee-tee"),
                   ("Airflow", "Airflow", "air-flow"),
                   ("DAG", "DAG", "dag"),
                   ("CDC", "CDC", "see-dee-see"),
                   ("Parquet", "Parquet", "par-kay"),
                   ("Iceberg", "Iceberg", "ice-berg"),
                   ("SLA", "SLA", "ess-el-ay"),
                   ("Snowflake", "Snowflake", "snow-flake")),
        "numbers": (("the nightly load", "count", "rows"), ("the storage cost", "money", ""),
                    ("the backfill date", "date", ""), ("the freshness target", "minutes", "minutes")),
        "tasks": ("migrate the {j} jobs", "document the {j} lineage", "add tests to the {j} models",
                  "tune the {j} partitions"),
        "statuses": ("the {j} migration is halfway", "{j} failed twice last night",
                     "the {j} backfill finished", "we're waiting on access to {j}"),
        "decisions": (("the table format for {j}", ("Iceberg tables", "plain files")),
                      ("the {j} schedule", ("hourly runs", "nightly runs"))),
    },
    {
        "name": ("Beacon", "Beacon", "beacon"),
        "topic": "the mobile release",
        "jargon": (("TestFlight", "TestFlight", "test-flight"),
                   ("ANR", "ANR", "ay-en-arr"),
                   ("APNs", "APNs", "ay-pee-ens"),
                   ("Crashlytics", "Crashlytics", "crash-lyticks"),
                   ("SDK", "SDK", "ess-dee-kay"),
                   ("OTA", "OTA", "oh-tee-ay"),
                   ("4.12.0", "four point twelve point oh", "four point twelve point oh"),
                   ("KMM", "KMM", "kay-em-em")),
        "numbers": (("the crash-free rate", "percent", ""), ("the release date", "date", ""),
                    ("the beta group", "count", "testers"), ("the app size", "megabytes", "megabytes")),
        "tasks": ("fix the {j} regression", "update the {j} integration", "run the {j} smoke tests",
                  "write the {j} release notes"),
        "statuses": ("{j} numbers look fine this week", "the {j} build got rejected",
                     "we're seeing more {j} reports", "the {j} upgrade is merged"),
        "decisions": (("the {j} rollout", ("a staged rollout", "everyone at once")),
                      ("support for {j}", ("dropping it", "keeping it one more release"))),
    },
)

# Projects of mixed workspaces (Chinese or Japanese turns with English terms and tickers): the
# name and the jargon, said in English; the phrases around them are the base language's
# (speechkit/synth/zh.py, ja.py).
MIXED_PROJECTS = (
    {"name": ("Atlas", "Atlas", "atlas"),
     "jargon": (("EBITDA", "EBITDA", "ee-bit-dah"), ("ROE", "ROE", "arr-oh-ee"), ("guidance", "guidance", "guidance"),
                ("Q3 earnings", "Q3 earnings", "queue-three earnings"), ("TSLA", "TSLA", "tee-ess-el-ay"),
                ("NVDA", "NVDA", "en-vee-dee-ay"), ("free cash flow", "free cash flow", "free cash flow"),
                ("buyback", "buyback", "buy-back"))},
    {"name": ("Harbor", "Harbor", "harbor"),
     "jargon": (("IPO", "IPO", "eye-pee-oh"), ("KYC", "KYC", "kay-why-see"), ("CDS", "CDS", "see-dee-ess"),
                ("AML", "AML", "ay-em-el"), ("term sheet", "term sheet", "term sheet"),
                ("roadshow", "roadshow", "road-show"), ("lock-up", "lock-up", "lock-up"),
                ("HKEX", "HKEX", "aitch-kay-ex"))},
    {"name": ("Vega", "Vega", "vega"),
     "jargon": (("VaR", "VaR", "var"), ("delta hedge", "delta hedge", "delta hedge"),
                ("basis point", "basis point", "basis point"), ("FX swap", "FX swap", "eff-ex swap"),
                ("SOFR", "SOFR", "so-fur"), ("duration", "duration", "duration"),
                ("stop-loss", "stop-loss", "stop-loss"), ("MSCI", "MSCI", "em-ess-see-eye"))},
)

# Enrollment passages (Harvard sentences, public domain). The dialogue templates never use them.
ENROLLMENT_SENTENCES = (
    "The birch canoe slid on the smooth planks.", "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.", "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.", "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.", "The hogs were fed chopped corn and garbage.",
    "Four hours of steady work faced us.", "A large size in stockings is hard to sell.",
    "The boy was there when the sun rose.", "A rod is used to catch pink salmon.",
    "The source of the huge river is the clear spring.", "Kick the ball straight and follow through.",
    "Help the woman get back to her feet.", "A pot of tea helps to pass the evening.",
    "Smoky fires lack flame and heat.", "The soft cushion broke the man's fall.",
    "The salt breeze came across from the sea.", "The girl at the booth sold fifty bonds.",
    "The small pup gnawed a hole in the sock.", "The fish twisted and turned on the bent hook.",
    "Press the pants and sew a button on the vest.", "The swan dive was far short of perfect.",
    "The beauty of the view stunned the young boy.", "Two blue fish swam in the tank.",
    "Her purse was full of useless trash.", "The colt reared and threw the tall rider.",
    "It snowed, rained, and hailed the same morning.", "Read verse out loud for pleasure.",
)
