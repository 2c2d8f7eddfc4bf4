// "Debug block N": what the client does with the server's sage.debugBlock answer (a DebugLaunch,
// server/features/debugging.py). The server built the task for gdb; VS Code starts the C/C++
// extension's debugger (cppdbg) on it with the stop as a conditional breakpoint, or, without that
// extension, gdb in a terminal. No `vscode` import (unit-tested).

/** Where gdb stops: a line of the user's kernel (1-based) when the condition names the block. */
export interface DebugStop {
    file: string;
    line: number;
    condition: string;
}

/** sage.debugBlock's answer (camelCase on the wire). */
export interface DebugLaunch {
    ready: boolean;
    block: number;
    reason?: string | null;
    entry?: string | null;
    terminalLine?: string | null;
    stop?: DebugStop | null;
    launch?: Record<string, unknown> | null;
}

export function isDebugLaunch(value: unknown): value is DebugLaunch {
    const v = value as DebugLaunch | null;
    return typeof v === 'object' && v !== null && typeof v.ready === 'boolean' && typeof v.block === 'number';
}

/** What to do: start a debug session with a breakpoint at the stop, run gdb in a terminal, or say why not. */
export type DebugStep =
    | { kind: 'session'; configuration: Record<string, unknown>; stop: DebugStop }
    | { kind: 'terminal'; line: string; note: string }
    | { kind: 'refused'; message: string };

export const CPPTOOLS = 'ms-vscode.cpptools';

export function debugStep(answer: unknown, hasCppTools: boolean): DebugStep {
    if (!isDebugLaunch(answer)) {
        return { kind: 'refused', message: 'SAGE: the server gave no debug configuration (see the SAGE log).' };
    }
    if (!answer.ready || !answer.stop || !answer.launch || !answer.terminalLine) {
        return { kind: 'refused', message: `SAGE: block ${answer.block} cannot be debugged: ${answer.reason ?? 'no reason given'}.` };
    }
    if (hasCppTools) {
        return { kind: 'session', configuration: answer.launch, stop: answer.stop };
    }
    return {
        kind: 'terminal',
        line: answer.terminalLine,
        note: `SAGE: gdb runs in a terminal, stopped in block ${answer.block} of ${answer.entry ?? 'the kernel'} ` +
            `(install the C/C++ extension, ${CPPTOOLS}, to debug in the editor).`,
    };
}
