// The server's cancellable work-done progress (an "Optimize" episode), tracked by token so
// "SAGE: Cancel Optimization" can cancel it. No `vscode` import (unit-tested).

export type ProgressToken = string | number;

/** The cancellable operations running now, in the order they began. */
export class CancellableProgress {
    private readonly running: ProgressToken[] = [];

    /** A `begin`: only cancellable progress is kept (an evaluation is not). */
    began(token: ProgressToken, cancellable: boolean | undefined): void {
        if (cancellable && !this.running.includes(token)) {
            this.running.push(token);
        }
    }

    ended(token: ProgressToken): void {
        const at = this.running.indexOf(token);
        if (at >= 0) {
            this.running.splice(at, 1);
        }
    }

    /** The tokens "Cancel Optimization" cancels: all running ones, which are then forgotten. */
    cancelAll(): ProgressToken[] {
        return this.running.splice(0);
    }
}
