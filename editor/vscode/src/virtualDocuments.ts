// Read-only documents the extension makes up (a suggested file for the diff view, the memory
// summary): a URI per document, its text kept here. Unlike untitled documents they never ask
// to be saved when closed.
import * as vscode from 'vscode';

export class VirtualDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly texts = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;
    private readonly registration: vscode.Disposable;

    constructor(readonly scheme: string) {
        this.registration = vscode.workspace.registerTextDocumentContentProvider(scheme, this);
    }

    /** A URI of this scheme for `path` (shown as the document's name) holding `text`. */
    put(path: string, text: string, query = ''): vscode.Uri {
        const uri = vscode.Uri.from({ scheme: this.scheme, path, query });
        this.texts.set(uri.toString(), text);
        this.changed.fire(uri);
        return uri;
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.texts.get(uri.toString()) ?? '';
    }

    dispose(): void {
        this.registration.dispose();
        this.changed.dispose();
    }
}
