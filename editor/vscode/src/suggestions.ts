// The suggestions and reports the server sent, one per task, and which one a command means:
// the one of the active editor's task, else the most recent. No `vscode` import (unit-tested).
import * as path from 'path';

/** The `sage/suggestion` notification (sage_npu.server.features.suggestions). */
export interface SuggestionNotice {
    /** The kernel the episode ran for. */
    uri: string;
    /** The task folder; the diff's paths are relative to it. */
    task: string;
    title: string;
    episodeId: string;
    attemptId: string;
    speedup: number | null;
    /** Unified diff, `a/<file>` to `b/<file>`. */
    diff: string;
    /** True when the speedup comes from the CPU cost model. */
    estimated: boolean;
}

export function isSuggestionNotice(value: unknown): value is SuggestionNotice {
    const s = value as Partial<SuggestionNotice> | null;
    return typeof s === 'object' && s !== null && ['uri', 'task', 'title', 'episodeId', 'attemptId', 'diff']
        .every((key) => typeof (s as Record<string, unknown>)[key] === 'string');
}

/** Titles of the server's code action that applies a suggestion (its reject action has another). */
export const APPLY_TITLE_PREFIXES = ['SAGE rewrite:', 'SAGE fix:'];

export function isApplyTitle(title: string): boolean {
    return APPLY_TITLE_PREFIXES.some((prefix) => title.startsWith(prefix));
}

interface PerTask {
    task: string;
}

function sameFolder(a: string, b: string): boolean {
    return path.resolve(a) === path.resolve(b);
}

/** `items` with `item` as the most recent (last), replacing the older one of its task. */
export function remember<T extends PerTask>(items: readonly T[], item: T): T[] {
    return [...items.filter((x) => !sameFolder(x.task, item.task)), item];
}

/** `items` without the one of `task`. */
export function forget<T extends PerTask>(items: readonly T[], task: string): T[] {
    return items.filter((x) => !sameFolder(x.task, task));
}

/** The item of the task `file` belongs to (its folder), else the most recent, else undefined. */
export function pickForFile<T extends PerTask>(items: readonly T[], file: string | undefined): T | undefined {
    const own = file === undefined ? undefined : items.find((x) => sameFolder(x.task, path.dirname(file)));
    return own ?? items[items.length - 1];
}
