// Package soak runs the local stack (`bridgeline dev` with its livekit-server) under mixed
// API traffic with calls for a bounded time and count, and reports errors, p99 latency
// per route class and the resident memory of both processes: before the load, at its
// end, and once every room is gone and the processes have been idle (goal: flat).
//
// `make soak` runs TestSoak (SOAK_DURATION, default 2m). TestSoakShort is the short
// variant: a few hundred sessions, failing when either process keeps more than a bound
// per session once the load is over. Both skip under -short and when livekit-server is
// not built.
package soak
