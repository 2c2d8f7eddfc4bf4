// The server's work-done progress, shown by the extension instead of the client library (which
// puts even a cancellable episode in the status bar, where it cannot be cancelled): a cancellable
// one as a notification with a Cancel button, and "SAGE: Cancel Optimization" cancels it too.
import * as vscode from 'vscode';
import {
    LanguageClient, WorkDoneProgress, WorkDoneProgressCancelNotification, WorkDoneProgressCreateRequest,
} from 'vscode-languageclient/node';
import { CancellableProgress, ProgressToken } from './episodes';

export class ServerProgress {
    private readonly cancellable = new CancellableProgress();
    private client: LanguageClient | undefined;

    /** Takes over window/workDoneProgress/create for `client` (call after it started). */
    attach(client: LanguageClient): vscode.Disposable {
        this.client = client;
        return client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => this.follow(client, token));
    }

    /** One handler for the token's whole life: begin opens the display, report updates it, end closes it. */
    private follow(client: LanguageClient, token: ProgressToken): void {
        let shown: vscode.Progress<{ message?: string }> | undefined;
        let close: (() => void) | undefined;
        let ended = false; // an end may come before withProgress runs its task
        const handler = client.onProgress(WorkDoneProgress.type, token, (value) => {
            if (value.kind === 'begin') {
                const begin = value;
                this.cancellable.began(token, begin.cancellable);
                const location = begin.cancellable ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window;
                void vscode.window.withProgress({ location, title: begin.title, cancellable: begin.cancellable },
                    (progress, cancel) => new Promise<void>((resolve) => {
                        shown = progress;
                        close = resolve;
                        if (ended) {
                            resolve();
                        }
                        progress.report({ message: begin.message });
                        cancel.onCancellationRequested(() => this.cancel([token]));
                    }));
            } else if (value.kind === 'report') {
                shown?.report({ message: value.message });
            } else if (value.kind === 'end') {
                ended = true;
                this.cancellable.ended(token);
                handler.dispose();
                close?.();
            }
        });
    }

    private cancel(tokens: ProgressToken[]): void {
        for (const token of tokens) {
            void this.client?.sendNotification(WorkDoneProgressCancelNotification.type, { token });
        }
    }

    /** "SAGE: Cancel Optimization": false when nothing cancellable runs. */
    cancelAll(): boolean {
        const tokens = this.cancellable.cancelAll();
        this.cancel(tokens);
        return tokens.length > 0;
    }
}
