// The suggestions and reports the server sent, one per task, which one a command means (the
// one of the active editor's task, else the most recent) and which files accepting one writes.
// No `vscode` import (unit-tested).
import * as path from 'path';

/** A file of a suggestion, whole (sage_npu.server.features.suggestions.SuggestedFile). */
export interface SuggestedFile {
    /** Absolute path. */
    path: string;
    /** Relative to the task folder. */
    name: string;
    /** The file's whole suggested text. */
    text: string;
}

/** The `sage/suggestion` notification (sage_npu.server.features.suggestions.SuggestionNotice). */
export interface SuggestionNotice {
    /** The kernel the episode ran for. */
    uri: string;
    /** The task folder. */
    task: string;
    title: string;
    episodeId: string;
    attemptId: string;
    speedup: number | null;
    /** The files the suggestion changes, each whole: what the diff view shows and Accept writes. */
    files: SuggestedFile[];
    /** The same change as a unified diff, `a/<file>` to `b/<file>` (for reading; not applied). */
    diff: string;
    /** True when the speedup comes from the CPU cost model. */
    estimated: boolean;
}

function hasStrings(value: unknown, keys: string[]): boolean {
    return typeof value === 'object' && value !== null &&
        keys.every((key) => typeof (value as Record<string, unknown>)[key] === 'string');
}

export function isSuggestionNotice(value: unknown): value is SuggestionNotice {
    if (!hasStrings(value, ['uri', 'task', 'title', 'episodeId', 'attemptId'])) {
        return false;
    }
    const files = (value as { files?: unknown }).files;
    return Array.isArray(files) && files.every((f) => hasStrings(f, ['path', 'name', 'text']));
}

/** What accepting does to one file: replace its whole text, or create it. */
export interface Replacement {
    file: SuggestedFile;
    create: boolean;
}

/** Line endings aside (VS Code writes a replacement with the document's own), the same text. */
function sameText(a: string, b: string): boolean {
    return a.replace(/\r\n?/g, '\n') === b.replace(/\r\n?/g, '\n');
}

/**
 * The files accepting must write, given each file's current text (undefined: it does not exist):
 * a file that already reads as suggested is left alone, a missing one is created.
 */
export function replacements(files: readonly SuggestedFile[], current: (file: SuggestedFile) => string | undefined): Replacement[] {
    const out: Replacement[] = [];
    for (const file of files) {
        const text = current(file);
        if (text === undefined || !sameText(text, file.text)) {
            out.push({ file, create: text === undefined });
        }
    }
    return out;
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

/**
 * The item of the task `file` belongs to; the most recent only when no file is active. The
 * status bar's verdict: a kernel not evaluated yet (its verdict on open still running) must not
 * show another task's result as its own.
 */
export function ownForFile<T extends PerTask>(items: readonly T[], file: string | undefined): T | undefined {
    return file === undefined ? items[items.length - 1] : items.find((x) => sameFolder(x.task, path.dirname(file)));
}

/** The status bar item of undecided suggestions: it stays until each is accepted or rejected. */
export interface PendingView {
    text: string;
    tooltip: string;
}

/**
 * Undefined when nothing waits; else the latest suggestion's title (the server's own text, e.g.
 * its estimated speedup) and how many more wait.
 */
export function pendingView(items: readonly SuggestionNotice[]): PendingView | undefined {
    const latest = items[items.length - 1];
    if (!latest) {
        return undefined;
    }
    const more = items.length > 1 ? ` (+${items.length - 1} more)` : '';
    return {
        text: `$(lightbulb) SAGE: suggestion ready (${latest.title})${more} — Review`,
        tooltip: `SAGE suggests ${latest.title} for ${latest.task}. Click to show the diff, accept or reject it.`,
    };
}

/** The `sage/episode` notification: an episode ended (sage_npu.server.features.suggestions.EpisodeNotice). */
export interface EpisodeNotice {
    uri: string;
    task: string;
    /** improved, fixed, no_improvement, seed_not_correct, or failed (the agent process could not run it). */
    status: string;
    /** The line to show: the verified gain, or why there is none. */
    message: string;
    episodeId: string | null;
    speedup: number | null;
    estimated: boolean;
    /** The suggestion's title when the episode left one (it came as sage/suggestion just before). */
    title: string | null;
    turns: number;
    model: string;
    error: string | null;
}

export function isEpisodeNotice(value: unknown): value is EpisodeNotice {
    return hasStrings(value, ['uri', 'task', 'status', 'message']);
}

/** The `sage/decision` notification (sage_npu.server.features.suggestions.DecisionNotice). */
export interface DecisionNotice {
    task: string;
    episodeId: string;
    /** accept (the rewrite was saved), reject (undone, closed unsaved, or the reject command), timeout. */
    decision: 'accept' | 'reject' | 'timeout';
    reason: string;
    logged: boolean;
    reward: number | null;
}

export function isDecisionNotice(value: unknown): value is DecisionNotice {
    return hasStrings(value, ['task', 'episodeId', 'decision', 'reason']) &&
        typeof (value as { logged?: unknown }).logged === 'boolean';
}

export type Severity = 'info' | 'warning' | 'error';

/** How an episode's end is shown: its message, and how loud. */
export function episodeSeverity(e: EpisodeNotice): Severity {
    if (e.status === 'failed') {
        return 'error';
    }
    return e.error && e.error !== 'cancelled' ? 'warning' : 'info';
}

/** The line for a decision; the reward only where it means something (an acceptance). */
export function decisionMessage(d: DecisionNotice): { severity: Severity; text: string } {
    const what = { accept: 'accepted', reject: 'rejected', timeout: 'left undecided' }[d.decision];
    if (!d.logged) {
        return { severity: 'warning', text: `SAGE: rewrite ${what} (${d.reason}), but it was not logged.` };
    }
    const reward = d.decision === 'accept' && typeof d.reward === 'number' ? ` (reward ${d.reward.toFixed(2)})` : '';
    return { severity: 'info', text: `SAGE: rewrite ${what} (${d.reason}): logged in the experience memory${reward}.` };
}
