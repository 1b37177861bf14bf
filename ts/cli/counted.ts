/**
 * `n` and the noun it counts, singular for one: "1 record", "3 records", "1 entity" (`many`
 * for a plural not made with -s). CLI summaries are read by people, and "exported 1 records"
 * was found by QA.
 */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
