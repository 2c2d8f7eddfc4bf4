// A unified diff (the server's `sage/suggestion` carries one, from Python's difflib) applied to
// the current text of a file, to show the suggested file before it is accepted. Hunks are
// found where the diff says or, when the file moved since, at the nearest place whose lines
// match exactly (as `patch` does without fuzz); a hunk that matches nowhere is an error.

export interface Hunk {
    oldStart: number;
    oldLines: number;
    newStart: number;
    newLines: number;
    /** The lines the hunk replaces and the lines it puts there, each with its line ending. */
    before: string[];
    after: string[];
}

export interface FilePatch {
    /** Paths as the headers give them, without the `a/` and `b/` prefixes. */
    oldPath: string;
    newPath: string;
    hunks: Hunk[];
}

export class PatchError extends Error {}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function headerPath(rest: string): string {
    // "a/add_custom.cpp\t2024-01-01 ..." -> "add_custom.cpp"
    const name = rest.split('\t')[0].replace(/\r$/, '').trim();
    return name.replace(/^[ab]\//, '');
}

/** The file patches of a unified diff; lines outside hunks (`diff --git`, `index`, prose) are skipped. */
export function parsePatch(text: string): FilePatch[] {
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') {
        lines.pop();
    }
    const files: FilePatch[] = [];
    let current: FilePatch | undefined;
    let i = 0;
    while (i < lines.length) {
        const line = lines[i];
        if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
            current = { oldPath: headerPath(line.slice(4)), newPath: headerPath(lines[i + 1].slice(4)), hunks: [] };
            files.push(current);
            i += 2;
            continue;
        }
        const m = HUNK_HEADER.exec(line);
        if (!m) {
            i++;
            continue;
        }
        if (!current) {
            throw new PatchError(`diff line ${i + 1}: a hunk before any "---"/"+++" file header`);
        }
        const hunk: Hunk = {
            oldStart: Number(m[1]), oldLines: m[2] === undefined ? 1 : Number(m[2]),
            newStart: Number(m[3]), newLines: m[4] === undefined ? 1 : Number(m[4]),
            before: [], after: [],
        };
        i++;
        // The header's counts say where the hunk ends: a removed line "-- x" reads "--- x",
        // which would otherwise look like the next file's header.
        let oldLeft = hunk.oldLines;
        let newLeft = hunk.newLines;
        while (oldLeft > 0 || newLeft > 0) {
            if (i >= lines.length) {
                throw new PatchError(`diff of ${current.newPath}: the hunk "${line}" ends early`);
            }
            const body = lines[i];
            // "\ No newline at end of file" after a line: that line has no line ending.
            const noEol = lines[i + 1]?.startsWith('\\') ?? false;
            const content = body.slice(1) + (noEol ? '' : '\n');
            const kind = body === '' ? ' ' : body[0]; // some tools strip the space of an empty context line
            if (kind === ' ') {
                hunk.before.push(content);
                hunk.after.push(content);
                oldLeft--;
                newLeft--;
            } else if (kind === '-') {
                hunk.before.push(content);
                oldLeft--;
            } else if (kind === '+') {
                hunk.after.push(content);
                newLeft--;
            } else {
                throw new PatchError(`diff line ${i + 1}: "${body.slice(0, 40)}" inside a hunk of ${current.newPath}`);
            }
            if (oldLeft < 0 || newLeft < 0) {
                throw new PatchError(`diff of ${current.newPath}: the hunk "${line}" has more lines than its header says`);
            }
            i += noEol ? 2 : 1;
        }
        current.hunks.push(hunk);
    }
    return files;
}

/** `text` split after each "\n"; the last line may have no ending. */
export function splitLines(text: string): string[] {
    return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

function matchesAt(lines: string[], want: string[], at: number): boolean {
    return want.every((line, k) => lines[at + k] === line);
}

/** The start nearest to `expected`, not before `min`, where `want` matches, or -1. */
function locate(lines: string[], want: string[], expected: number, min: number): number {
    const max = lines.length - want.length;
    const start = Math.min(Math.max(expected, min), Math.max(max, min));
    for (let d = 0; start - d >= min || start + d <= max; d++) {
        for (const at of d === 0 ? [start] : [start - d, start + d]) {
            if (at >= min && at <= max && matchesAt(lines, want, at)) {
                return at;
            }
        }
    }
    return -1;
}

/**
 * `text` with the patch applied. CRLF files are matched as if their lines ended in "\n" (the
 * server reads files with Python's universal newlines) and keep their CRLF endings.
 */
export function applyPatch(text: string, patch: FilePatch): string {
    const crlf = text.includes('\r\n');
    const lf = (line: string) => line.replace(/\r\n$/, '\n');
    const lines = splitLines(crlf ? text.replace(/\r\n/g, '\n') : text);
    const out: string[] = [];
    let next = 0;   // first line of `lines` not copied yet
    let drift = 0;  // how far the previous hunk sat from where the diff put it
    patch.hunks.forEach((hunk, n) => {
        // "-5,0" inserts after line 5; "-5,3" replaces from line 5 on.
        const origin = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
        const before = hunk.before.map(lf);
        const at = locate(lines, before, origin + drift, next);
        if (at < 0) {
            throw new PatchError(
                `${patch.newPath}: hunk ${n + 1} (lines ${hunk.oldStart}-${hunk.oldStart + hunk.oldLines - 1}) ` +
                'does not match the file as it is now; it changed since the suggestion was made. ' +
                'Run "Optimize with SAGE" again for a suggestion against the current text.');
        }
        drift = at - origin;
        out.push(...lines.slice(next, at), ...hunk.after.map(lf));
        next = at + before.length;
    });
    out.push(...lines.slice(next));
    const result = out.join('');
    return crlf ? result.replace(/\n/g, '\r\n') : result;
}
