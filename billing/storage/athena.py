"""Run a statement on Amazon Athena and read its rows (boto3; issue 28, item 2).

Athena is asynchronous: StartQueryExecution answers an id, GetQueryExecution is polled until the state
is SUCCEEDED, FAILED or CANCELLED (QUEUED and RUNNING wait), and GetQueryResults pages the rows
(NextToken), the first row of the first page being the column names. A failed or cancelled query is an
AthenaQueryError carrying Athena's StateChangeReason; a query still running after `timeout_s` is
stopped (StopQueryExecution) and is an AthenaQueryTimeout. Values come back as text (VarCharValue; a
NULL has none).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

DONE = {"SUCCEEDED", "FAILED", "CANCELLED"}


class AthenaQueryError(RuntimeError):
    def __init__(self, query_id: str, state: str, reason: str):
        super().__init__(f"Athena query {query_id} {state.lower()}: {reason or 'no reason given'}")
        self.query_id, self.state, self.reason = query_id, state, reason


class AthenaQueryTimeout(AthenaQueryError):
    pass


@dataclass
class AthenaRunner:
    client: object  # boto3.client("athena")
    database: str
    workgroup: str = "primary"
    output_location: str = ""  # s3://…; empty uses the workgroup's own
    timeout_s: float = 300.0
    poll_s: float = 1.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def __call__(self, sql: str) -> list[tuple]:
        return self.rows(self.start(sql))

    def start(self, sql: str) -> str:
        request = {
            "QueryString": sql,
            "QueryExecutionContext": {"Database": self.database},
            "WorkGroup": self.workgroup,
        }
        if self.output_location:
            request["ResultConfiguration"] = {"OutputLocation": self.output_location}
        return self.client.start_query_execution(**request)["QueryExecutionId"]

    def wait(self, query_id: str) -> None:
        """Poll until done, at most `timeout_s`; a failed, cancelled or overdue query raises."""
        deadline = self.clock() + self.timeout_s
        while True:
            status = self.client.get_query_execution(QueryExecutionId=query_id)["QueryExecution"]["Status"]
            state = status["State"]
            if state == "SUCCEEDED":
                return
            if state in DONE:
                raise AthenaQueryError(query_id, state, status.get("StateChangeReason", ""))
            if self.clock() >= deadline:
                self.client.stop_query_execution(QueryExecutionId=query_id)
                raise AthenaQueryTimeout(
                    query_id, "TIMED OUT", f"still {state} after {self.timeout_s:g} s; stopped"
                )
            self.sleep(self.poll_s)

    def rows(self, query_id: str) -> list[tuple]:
        """Every row of a query's result (the header row dropped), all pages."""
        self.wait(query_id)
        rows: list[tuple] = []
        request = {"QueryExecutionId": query_id}
        first = True
        while True:
            page = self.client.get_query_results(**request)
            data = [
                tuple(cell.get("VarCharValue") for cell in row["Data"]) for row in page["ResultSet"]["Rows"]
            ]
            rows += data[1:] if first else data
            first = False
            if not page.get("NextToken"):
                return rows
            request["NextToken"] = page["NextToken"]
