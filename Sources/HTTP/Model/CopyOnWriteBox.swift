/// The fields of a value type, in one box shared by its copies until one of them changes (copy on write): the
/// one storage of ``HTTPRequest``, ``HTTPResponse`` and ``HTTPError``.
///
/// Requests and results travel through every loader's async frame and wait in every parked request: one
/// reference keeps them a word each, and passing one on is a retain, not a copy of its fields.
// Safety: `value` is written only through `unique(_:)`, when the value type writing it is the box's only owner;
// a shared box is only read.
@usableFromInline
final class CopyOnWriteBox<Value: Sendable>: @unchecked Sendable {
    /// The fields, read and written without the runtime's exclusivity check (a thread-local lookup per access):
    /// a box is private to the value that owns it, so every access is inside an access to that value, which
    /// Swift checks already.
    @usableFromInline @exclusivity(unchecked) var value: Value

    @usableFromInline init(_ value: Value) { self.value = value }

    /// `box`, replaced first by a copy of itself when another value shares it.
    @inlinable static func unique(_ box: inout CopyOnWriteBox) -> CopyOnWriteBox {
        if !isKnownUniquelyReferenced(&box) { box = CopyOnWriteBox(box.value) }
        return box
    }
}
