import Testing

@testable import HTTP

@Suite(.noHang) struct LRUListTests {
    @Test func usesMoveKeysToTheNewEndAndEvictionTakesTheOldest() {
        var list = LRUList<String, Int>()
        list.set(1, cost: 10, for: "a")
        list.set(2, cost: 20, for: "b")
        list.set(3, cost: 30, for: "c")
        #expect(list.keysFromOldest == ["a", "b", "c"])
        #expect(list.use("a") == 1)
        #expect(list.keysFromOldest == ["b", "c", "a"])
        #expect(list.peek("b") == 2)
        #expect(list.keysFromOldest == ["b", "c", "a"])  // a peek is not a use
        #expect(list.removeOldest()?.key == "b")
        #expect(list.totalCost == 40 && list.count == 2)
    }

    @Test func replacingAValueUpdatesItsCostAndRecency() {
        var list = LRUList<String, Int>()
        list.set(1, cost: 10, for: "a")
        list.set(2, cost: 20, for: "b")
        #expect(list.set(3, cost: 5, for: "a") == 1)
        #expect(list.keysFromOldest == ["b", "a"])
        #expect(list.totalCost == 25)
    }

    /// Random operations against a plain array model: the order, the count and the total cost always agree.
    @Test func randomOperationsMatchASimpleModel() {
        let seed = SplitMix64.seed()
        print("LRUListTests: seed \(seed) (replay with HTTP_TEST_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        var list = LRUList<Int, Int>()
        var model: [(key: Int, cost: Int)] = []  // oldest first
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<40, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0, 1:
                let cost = Int.random(in: 0..<100, using: &random)
                list.set(key, cost: cost, for: key)
                model.removeAll { $0.key == key }
                model.append((key, cost))
            case 2:
                let found = list.use(key)
                if let index = model.firstIndex(where: { $0.key == key }) {
                    model.append(model.remove(at: index))
                    #expect(found == key, "seed \(seed), step \(step)")
                } else {
                    #expect(found == nil, "seed \(seed), step \(step)")
                }
            case 3:
                #expect((list.remove(key) != nil) == model.contains { $0.key == key }, "seed \(seed), step \(step)")
                model.removeAll { $0.key == key }
            default:
                #expect(list.removeOldest()?.key == model.first?.key, "seed \(seed), step \(step)")
                if !model.isEmpty { model.removeFirst() }
            }
            #expect(list.keysFromOldest == model.map(\.key), "seed \(seed), step \(step)")
            #expect(list.totalCost == model.map(\.cost).reduce(0, +), "seed \(seed), step \(step)")
        }
    }
}
