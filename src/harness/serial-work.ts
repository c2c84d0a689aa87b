/**
 * Work run one item after another and awaited later (hook records, retry observers): `run(work)` starts once everything before settled;
 * `settled()` rejects with the first failure since the last call. A failure never stops later items.
 * @example
 * const records = new SerialWork();
 * records.run(() => agent.appendRecords([event]));
 * await records.settled(); // throws the first refused record
 */

/** Work run one item after another (see the module contract). */
export class SerialWork {
  #tail: Promise<void> = Promise.resolve();
  #failure: { error: unknown } | undefined;

  /** Runs `work` after everything run before it. */
  run(work: () => Promise<unknown>): void {
    this.#tail = this.#tail.then(work).then(
      () => undefined,
      (error: unknown) => {
        this.#failure ??= { error };
      },
    );
  }

  /** Resolves once everything run so far settled; rejects with the first failure since the last call. */
  async settled(): Promise<void> {
    await this.#tail;
    const failure = this.#failure;
    this.#failure = undefined;
    if (failure) throw failure.error;
  }
}
