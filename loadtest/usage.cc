#include "loadtest/options.h"

namespace onyx::load {

std::string UsageText() {
  return R"(onyx-load: a load generator for onyxd and any KServe v2 gRPC server.

usage: onyx-load --model NAME[:VERSION][@WEIGHT] ... [flags]
       onyx-load --empty [flags]                      (ServerLive: the empty call)
       onyx-load compare A.json B.json [--html FILE]  (two runs side by side)

Target and work
  --target HOST:PORT        gRPC address; repeat for replicas            (127.0.0.1:8001)
  --model NAME[:V][@W]      model (version V) to call with weight W; repeat for a mix
  --empty                   call ServerLive instead of ModelInfer
Load (one of; each level runs --warmup then --duration or --requests)
  --concurrency N|SWEEP     closed loop: N calls outstanding              (1)
  --rate R|SWEEP            open loop: R requests/s on an absolute schedule
  --ramp linear:FROM:TO     open loop, rate moving from FROM to TO over --duration
  --ramp step:FROM:TO:+S:HOLD   FROM, FROM+S, ... TO requests/s, each held HOLD
  --find-max --slo CRIT     highest open-loop rate meeting CRIT (--rate gives the start
                            or a FROM:TO:... range that bounds the search)
  SWEEP is V1,V2,..., FROM:TO:xFACTOR or FROM:TO:+STEP (1:64:x2, 100:2000:+100)
  --arrival constant|poisson    open-loop spacing; poisson is seeded by --seed   (constant)
  --seed S                  seed of arrivals, model mix and random inputs   (1)
  --max-inflight N          open loop: at most N outstanding; the excess waits in the client,
                            timed from its intended start
  --overflow queue|drop     beyond --max-inflight: wait (queue) or drop and count   (queue)
  --duration D              measured time per level (10s, 500ms, 2m)        (10s)
  --requests N              measured requests per level instead of --duration
  --warmup D                unmeasured time before each level               (1s)
  --find-max-precision P    stop the search when the bounds are within P    (0.05)
  --threads T               client event loops                              (1)
  --connections N           separate TCP connections (own subchannel pools) (1)
  --streaming               send through ModelStreamInfer
  --timeout D               per-request gRPC deadline; 0 sets none (a deadline costs a
                            timer per call)                                 (0)
  --drain-timeout D         after a level's schedule, wait this long for replies, then
                            cancel what is outstanding (counted CANCELLED)  (30s)
  --connect-timeout D       wait this long for the target before giving up  (10s)
Inputs (shapes and datatypes from ModelMetadata)
  --batch B                 rows per request: fills a variable first dimension  (1)
  --shape [MODEL:]INPUT=D1,D2,...   the whole shape of an input with variable dims
  --input-data [MODEL=]SRC  random | zeros | DIR of INPUT.npy / INPUT.pb | perf_analyzer
                            JSON file                                       (random)
  --encoding raw|typed      raw_input_contents or typed contents            (raw)
  --shm none|system         inputs and outputs through system shared memory (none)
  --validate                compare outputs with DIR's OUTPUT.npy/.pb or the JSON's
                            validation_data; a mismatch is an error
Server side
  --metrics-url URL         onyxd /metrics to scrape during the run; repeat for replicas
  --scrape-interval D       between scrapes                                 (1s)
  --no-server-stats         skip the ModelStatistics deltas
Reports and gates
  --percentiles P1,P2,...   percentiles to report                 (50,90,95,99,99.9)
  --json FILE  --csv FILE  --html FILE   write the run (JSON is versioned: "format")
  --trace FILE              one CSV line per request (streamed to disk)
  --quiet                   no progress line every second
  --assert CRIT             gate on every level; repeat or comma-separate
  --max-late-share S        sends more than 1 ms late above this share mark the
                            generator saturated (5%, or 0.05)               (5%)
  --help, --version
CRIT: pNN<DUR, max<DUR, mean<DUR, service.pNN<DUR, err<P%, late<P%, throughput>=R
      (operators < <= > >=); e.g. 'p99<25ms,err<0.1%'

Exit codes: 0 ok; 1 an --assert failed (or --find-max found no rate meeting --slo);
2 bad flags or inputs; 3 unstable (response times kept rising: the server fell
behind); 4 generator saturated (the sends fell behind schedule); 5 target
unreachable. When several apply, the highest wins.
)";
}

}  // namespace onyx::load
