/** Small statistics shared by the benchmarks. */

/** The median of `xs` (the upper one of an even count); `xs` is left as it is. */
export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
