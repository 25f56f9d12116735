// TestProgram.cpp - A hand-written "generated program" for the runtime tests.
// SPDX-License-Identifier: Apache-2.0
//
// Calls the runtime the way opdc's generated code does. --mode selects what
// it does after opd_rt_init: "params" prints every param (default), "print"
// prints values of each type, "loops" runs direct, coloured and block loops
// and prints their results (with --profile: the table follows), "fp"
// divides by zero at element --n of a direct loop (--check-fp stops there),
// "deck" prints the params an input deck (--deck) sets, "killed" prints a
// line and a value, then is killed by SIGKILL (no exit, no flush).
#include "opd_rt.h"

#include <csignal>
#include <cstring>

namespace {
int32_t n = 7;
int64_t big = 1;
float x = 0.5f;
double y = 0.25;
uint8_t flag = 0;
const char *name = "mesh.h5";
const char *mode = "params";
double state2_y = 0.0;        // a deck record key (--deck tests)
uint8_t shape_round = 0;      // a deck word value: shape=round

struct Scale {
  double *a;
  double factor;
};
void scaleBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *s = static_cast<Scale *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    s->a[i] *= s->factor;
}

struct Inc {
  const int32_t *map;
  double *target;
};
void incBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *s = static_cast<Inc *>(ctx);
  for (int64_t e = begin; e < end; ++e) {
    s->target[s->map[2 * e]] += 1.0;
    s->target[s->map[2 * e + 1]] += 1.0;
  }
}

struct Sum {
  const double *a;
  double *partials;
};
void sumBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *s = static_cast<Sum *>(ctx);
  double acc = 0;
  for (int64_t i = begin; i < end; ++i)
    acc += s->a[i];
  s->partials[chunk] = acc;
}

struct Divide {
  double *r;
};
void divideBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *s = static_cast<Divide *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    s->r[i] = 1.0 / double(i - n);
}

void runDivide() {
  opd_set *cells = opd_set_create("cells", 100);
  opd_dat *r = opd_dat_create("r", cells, OPD_F64, 1);
  static opd_loop *slot;
  opd_arg args[] = {{r, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8}};
  opd_loop *l = opd_loop_prepare(&slot, "divide", cells, 1, args);
  opd_loop_set_location(l, "prog.opd:3:5");
  Divide d{static_cast<double *>(opd_dat_data(r))};
  opd_loop_run(l, divideBody, &d);
  opd_rt_printf("written\n");
}

void runLoops() {
  opd_set *nodes = opd_set_create("nodes", 10000);
  opd_set *edges = opd_set_create("edges", 9999);
  opd_map *pedge = opd_map_create("pedge", edges, nodes, 2);
  int32_t *m = opd_map_data(pedge);
  for (int i = 0; i < 9999; ++i) {
    m[2 * i] = i;
    m[2 * i + 1] = i + 1;
  }
  opd_dat *a = opd_dat_create("a", nodes, OPD_F64, 1);
  double one = 1.0;
  opd_dat_fill(a, &one);

  static opd_loop *scaleSlot, *incSlot, *sumSlot;
  for (int it = 0; it < 3; ++it) {
    opd_arg sargs[] = {{a, nullptr, 0, OPD_ARG_DIRECT, OPD_RW, 8}};
    opd_loop *l = opd_loop_prepare(&scaleSlot, "scale", nodes, 1, sargs);
    Scale s{static_cast<double *>(opd_dat_data(a)), 2.0};
    opd_loop_run(l, scaleBody, &s);

    opd_arg iargs[] = {{a, pedge, 0, OPD_ARG_INDIRECT, OPD_INC, 8},
                       {a, pedge, 1, OPD_ARG_INDIRECT, OPD_INC, 8}};
    l = opd_loop_prepare(&incSlot, "increment", edges, 2, iargs);
    Inc inc{opd_map_data(pedge), static_cast<double *>(opd_dat_data(a))};
    opd_loop_run(l, incBody, &inc);
  }
  opd_arg rargs[] = {{a, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
                     {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  opd_loop *l = opd_loop_prepare(&sumSlot, "sum", nodes, 2, rargs);
  int64_t chunks = opd_loop_chunks(l);
  auto *partials = static_cast<double *>(opd_rt_scratch(chunks * 8));
  Sum s{static_cast<const double *>(opd_dat_data(a)), partials};
  opd_loop_run(l, sumBody, &s);
  double total = 0;
  for (int64_t c = 0; c < chunks; ++c)
    total += partials[c];
  opd_rt_print_str("total", 1);
  opd_rt_print_f64(total, 0);
  opd_rt_print_end();
}
} // namespace

int main(int argc, char **argv) {
  opd_param_desc params[] = {
      {"n", OPD_I32, &n, "number of cells along each side of the square"},
      {"big", OPD_I64, &big, nullptr},
      {"x", OPD_F32, &x, nullptr},
      {"y", OPD_F64, &y, nullptr},
      {"flag", OPD_BOOL, &flag, nullptr},
      {"name", OPD_STR, &name, nullptr},
      {"mode", OPD_STR, &mode, nullptr},
      {"state2_y", OPD_F64, &state2_y, nullptr},
      {"shape_round", OPD_BOOL, &shape_round, nullptr},
  };
  opd_rt_init(argc, argv, "testprog", params, 9);
  if (!std::strcmp(mode, "params")) {
    opd_rt_printf("n=%d big=%lld threads=%d\n", n, (long long)big,
                  opd_rt_threads());
    opd_rt_print_f32(x, 1);
    opd_rt_print_f64(y, 0);
    opd_rt_print_bool(flag, 0);
    opd_rt_print_str(name, 0);
    opd_rt_print_end();
  } else if (!std::strcmp(mode, "killed")) {
    opd_rt_printf("step 1\n");
    opd_rt_print_i64(2, 1);
    opd_rt_print_end();
    std::raise(SIGKILL);
  } else if (!std::strcmp(mode, "deck")) {
    opd_rt_printf("n=%d big=%lld y=%g flag=%d name=%s state2_y=%g round=%d\n",
                  n, (long long)big, y, int(flag), name, state2_y,
                  int(shape_round));
  } else if (!std::strcmp(mode, "print")) {
    opd_rt_print_i64(-42, 1);
    opd_rt_print_f64(3.0, 0);
    opd_rt_print_f64(0.1, 0);
    opd_rt_print_f64(1e-05, 0);
    opd_rt_print_f32(0.1f, 0);
    opd_rt_print_bool(1, 0);
    opd_rt_print_bool(0, 0);
    opd_rt_print_str("done", 0);
    opd_rt_print_end();
  } else if (!std::strcmp(mode, "loops")) {
    runLoops();
  } else if (!std::strcmp(mode, "fp")) {
    runDivide();
  } else if (!std::strcmp(mode, "fail")) {
    opd_rt_printf("before\n");
    opd_rt_fail("something went wrong");
  }
  return opd_rt_finalize();
}
