package toy;

import static org.junit.Assert.assertEquals;
import org.junit.Test;

public class ZeroTest extends BaseTest {
    @Test public void zeros() { assertEquals(0, Arith.add(0, 0)); }
}
