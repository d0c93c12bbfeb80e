"""An OTLP/HTTP metrics receiver for herd's tests, built on the official protobuf definitions
(PyPI's opentelemetry-proto). It listens on a free loopback port, prints `listening PORT`, then
one JSON line per request: the path, the headers, and the decoded ExportMetricsServiceRequest
(or why it could not be decoded). It answers as a collector does: 200 and an
ExportMetricsServiceResponse, 404 off /v1/metrics, 400 for a body that does not decode. With
OTLP_RECEIVER_REJECT set, every answer is a partial success that rejected one point."""

import http.server
import json
import os
import sys

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        seen = {
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        status = 200
        if self.path != "/v1/metrics":
            status = 404
        else:
            try:
                request = ExportMetricsServiceRequest()
                request.ParseFromString(body)
                seen["request"] = MessageToDict(request, preserving_proto_field_name=True)
            except Exception as e:  # a body that is not the message: the test fails on it
                seen["error"] = str(e)
                status = 400
        # Printed before the answer: once herd has its answer, the line is out.
        print(json.dumps(seen), flush=True)
        answer = ExportMetricsServiceResponse()
        if os.environ.get("OTLP_RECEIVER_REJECT"):
            answer.partial_success.rejected_data_points = 1
            answer.partial_success.error_message = "the test receiver rejects a point"
        reply = answer.SerializeToString()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
