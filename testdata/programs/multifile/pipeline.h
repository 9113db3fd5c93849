/* Shared declarations of the multifile program. */
#ifndef PIPELINE_H
#define PIPELINE_H

#define NOINLINE __attribute__((noinline))

unsigned long run_pipeline(unsigned rounds);
unsigned long stage_parse(unsigned long x);
unsigned long stage_transform(unsigned long x);
unsigned long stage_emit(unsigned long x);
unsigned long util_mix(unsigned long x);
unsigned long util_hash(unsigned long x);
unsigned long util_checksum(unsigned long x);

#endif
