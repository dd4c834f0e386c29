/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The engine's lock/token protocol (include/proofpipe/engine/engine.hpp) as a Promela model for spin.
 *
 * GW workers of one device each prove PARTS partitions. A worker takes, in the one global order:
 * host budget -> msm slot -> stage slot -> memory token (enqueue the upload, release) -> compute
 * token (enqueue H + MSMs, release) -> gives the stage slot back at once -> waits for its own
 * "done" event (finish) -> gives the msm slot and the host budget back. The device is two in-order
 * queues: the copy queue occupies the slots when an upload starts, after the slot's previous user
 * released it on the device (stream-ordered event); the compute queue waits for "staged", runs H,
 * releases the stage slot on the device, runs the MSMs and fires "done".
 *
 * Checked (model/check, for GW = 1..4 and REGIONS = 1..3):
 *   - no invalid end state (deadlock): every worker finishes all its partitions;
 *   - mutual exclusion: at most one holder of the memory token and of the compute token;
 *   - no worker ever holds both tokens;
 *   - the memory bound: device-side slots in use <= REGIONS, no slot occupied twice, and the
 *     engine never hands out more slots than exist.
 * Broken variants that spin must catch (model/check asserts it does):
 *   BROKEN_NESTED    tokens nested, odd workers in the reverse order (the order is not global)
 *   BROKEN_NO_EVENT  the upload does not wait for the slot's previous user (cuzk's OOM)
 *   BROKEN_NO_TOKEN  the memory token is not exclusive
 */

#ifndef GW
#define GW 2
#endif
#ifndef REGIONS
#define REGIONS 2
#endif
#ifndef PARTS
#define PARTS 2 /* partitions per worker: slots are reused within and across workers */
#endif
#ifndef MSM_SLOTS
#define MSM_SLOTS REGIONS /* msm slots >= stage slots (the planner's rule); model/check also runs +1 */
#endif

#ifndef HOST
#define HOST GW /* host budget in partitions; model/check also runs HOST=1 (backpressure) */
#endif
byte host = HOST;
byte msm_free = MSM_SLOTS;
byte stage_free = REGIONS;
byte msm_owner[MSM_SLOTS];   /* engine side: worker holding the slot, 0 when free */
byte stage_owner[REGIONS];

byte mem_holder = 0, comp_holder = 0;  /* token holders (worker ids from 1) */
byte mem_count = 0, comp_count = 0;    /* how many hold each token */
bool has_mem[GW + 1], has_comp[GW + 1];

/* the device */
chan copyq = [GW] of { byte, byte, byte };  /* stage slot, msm slot, worker */
chan compq = [GW] of { byte, byte };        /* stage slot, worker */
bool dev_stage[REGIONS], dev_msm[MSM_SLOTS];  /* occupied on the device */
byte dev_in_use = 0;                        /* stage + msm slots occupied on the device */
bool staged[GW + 1], done[GW + 1];
byte finished = 0;

inline take_mem(id) {
#ifdef BROKEN_NO_TOKEN
  atomic { mem_holder = id; mem_count++; has_mem[id] = true }
#else
  atomic { mem_holder == 0 -> mem_holder = id; mem_count++; has_mem[id] = true }
#endif
  assert(mem_count <= 1)
}
inline give_mem(id) { mem_holder = 0; mem_count--; has_mem[id] = false }
inline take_comp(id) {
  atomic { comp_holder == 0 -> comp_holder = id; comp_count++; has_comp[id] = true }
  assert(comp_count <= 1)
}
inline give_comp(id) { comp_holder = 0; comp_count--; has_comp[id] = false }

proctype worker(byte id) {
  byte k = 0, ms, ss;
  do
  :: k < PARTS ->
    /* 1. host budget */
    atomic { host > 0 -> host-- }
    /* (prepare: CPU work, no resource) */
    /* 2. msm slot (first free) */
    atomic {
      msm_free > 0 -> msm_free--; ms = 0;
      do
      :: msm_owner[ms] != 0 -> ms++
      :: msm_owner[ms] == 0 -> break
      od;
      msm_owner[ms] = id
    }
    /* 3. stage slot (first free) */
    atomic {
      stage_free > 0 -> stage_free--; ss = 0;
      do
      :: stage_owner[ss] != 0 -> ss++
      :: stage_owner[ss] == 0 -> break
      od;
      stage_owner[ss] = id
    }
#ifdef BROKEN_NESTED
    /* Both tokens held around stage + compute, taken in opposite orders by odd and even workers. */
    if
    :: id % 2 == 0 -> take_mem(id); take_comp(id)
    :: else -> take_comp(id); take_mem(id)
    fi;
    copyq ! ss, ms, id;
    compq ! ss, id;
    atomic { give_comp(id); give_mem(id) }
#else
    /* 4. memory token: enqueue the upload (never blocks: enqueue only), release */
    take_mem(id);
    atomic { assert(!has_comp[id]); copyq ! ss, ms, id; give_mem(id) }
    /* 5. compute token: enqueue H + MSMs, release; the stage slot goes back to the engine at
       once (the device orders its reuse after this partition's H step) */
    take_comp(id);
    atomic { assert(!has_mem[id]); compq ! ss, id; give_comp(id); stage_owner[ss] = 0; stage_free++ }
#endif
#ifdef BROKEN_NESTED
    atomic { stage_owner[ss] = 0; stage_free++ }
#endif
    /* finish: wait for this partition's own event, read the sums, free the msm slot and budget */
    atomic { done[id] -> done[id] = false; dev_msm[ms] = false; dev_in_use--; msm_owner[ms] = 0; msm_free++; host++ }
    k++
  :: k == PARTS -> break
  od;
  finished++
}

/* Each queue item is one atomic sequence; where it waits (an event) atomicity is lost there and
   the other processes run, exactly as an in-order stream blocks on cudaStreamWaitEvent. */
active proctype copy_queue() {
  byte ss, ms, w;
end:
  do
  :: atomic {
      copyq ? ss, ms, w;
#ifndef BROKEN_NO_EVENT
      !dev_stage[ss] && !dev_msm[ms];  /* stream-ordered wait for the previous users' release */
#endif
      assert(!dev_stage[ss] && !dev_msm[ms]);  /* no slot occupied twice */
      dev_stage[ss] = true; dev_msm[ms] = true; dev_in_use = dev_in_use + 2;
      assert(dev_in_use <= REGIONS + MSM_SLOTS);
      staged[w] = true
    }
  od
}

active proctype compute_queue() {
  byte ss, w;
end:
  do
  :: atomic {
      compq ? ss, w;
      staged[w] -> staged[w] = false;
      /* H step; then a, b, c are dead: the stage slot is released on the device */
      dev_stage[ss] = false; dev_in_use--
    }
    /* MSMs, then this partition's done event */
    done[w] = true
  od
}

init {
  byte i = 1;
  atomic {
    do
    :: i <= GW -> run worker(i); i++
    :: else -> break
    od
  }
  finished == GW;  /* every worker ended: no partition lost */
  assert(msm_free == MSM_SLOTS && stage_free == REGIONS && dev_in_use == 0 && host == HOST)
}

/* The engine never hands out more slots than exist (byte counters would wrap below 0). */
active proctype slot_bound() {
end:
  do
  :: atomic { (msm_free > MSM_SLOTS || stage_free > REGIONS) -> assert(false) }
  od
}
