import Foundation
import Switchyard

/// The Messenger model of the demo and the README, with Swift types for its entities (`Message`, `Chat`,
/// `LinkPreview`...) that the `SwitchyardCodegen` build plugin generates from `Messenger.xcdatamodeld`.
public enum MessengerSchema {
    /// `Messenger.xcdatamodeld`, as this target carries it.
    public static var modelURL: URL {
        guard let url = Bundle.module.url(forResource: "Messenger", withExtension: "xcdatamodeld") else {
            preconditionFailure("the MessengerSchema target is built without its Messenger.xcdatamodeld resource")
        }
        return url
    }

    /// The loaded model.
    public static func load() throws -> ObjectModel { try ModelLoader.load(at: modelURL) }
}
