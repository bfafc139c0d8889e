package toy;

import static org.junit.Assert.assertEquals;
import org.junit.Test;

public class AddTest extends BaseTest {
    @Test public void twoNumbers() { assertEquals(5, Arith.add(2, 3)); }
    @Test public void aNegativeNumber() { assertEquals(-1, Arith.add(2, -3)); }
}
