#!/usr/bin/python3
"""daemon_cqload.py — a 100,000-figure ReportProfile does not hold up other calls:
Health calls sent while the report is in flight are answered before it is.
Prints the figures (report time, Health latencies); asserts only the order.

usage: daemon_cqload.py PROTO_DIR STUBS TARGET
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tsl_rpc  # noqa: E402

N = 100000


def main():
    proto, stubs, target = sys.argv[1:4]
    tsl_rpc.load_stubs(proto, stubs)
    import grpc
    import health_pb2
    import health_pb2_grpc
    from tessel.v1 import registry_pb2 as rp, registry_pb2_grpc as rpg
    opts = [("grpc.max_send_message_length", 64 << 20)]
    ch = grpc.insecure_channel(target, options=opts)
    reg = rpg.RegistryStub(ch)
    health = health_pb2_grpc.HealthStub(grpc.insecure_channel(target))
    w = reg.RegisterWorker(rp.RegisterRequest(
        hostname="cq-host", simulated=True, version="test",
        devices=[rp.Device(index=0, model="sim NVIDIA A100 80GB", memory_bytes=80 << 30,
                           sm_count=108, uuid="u-cq")]), timeout=30)
    req = rp.ReportProfileRequest(worker_id=w.worker_id, report_id="cq-1")
    for i in range(N):
        m = req.measurements.add(name="gemm_fwd", unit="s", value=1e-3 + i * 1e-9, device_index=0,
                                 per_device=True)
        m.labels["m"] = str(i)
    t0 = time.monotonic()
    fut = reg.ReportProfile.future(req, timeout=240)
    during, lat = 0, []
    while not fut.done():
        h0 = time.monotonic()
        health.Check(health_pb2.HealthCheckRequest(), timeout=60)
        lat.append(time.monotonic() - h0)
        if not fut.done():
            during += 1
    res = fut.result()
    out = {"report_s": round(time.monotonic() - t0, 3), "stored": res.stored,
           "health_calls": len(lat), "health_done_during_report": during,
           "health_max_s": round(max(lat), 3) if lat else None,
           "health_median_s": round(sorted(lat)[len(lat) // 2], 4) if lat else None}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
